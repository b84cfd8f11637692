import { pino, type Logger } from 'pino';
import { errorSummary, stripLongHex } from './redact.ts';
import { logFields } from './log-context.ts';

export type { Logger };

/** Keys whose values must never reach a log line, wherever they appear in a logged object. */
const secretPaths = [
  'secretKey', 'privateKey', 'mnemonic', 'password', 'hashKey', 'tempKey', 'signature', 'token',
  'authorization', 'apiKey', 'masterKey',
].flatMap((key) => [key, `*.${key}`, `*.*.${key}`, `req.headers.${key}`]);

/**
 * Logged errors keep their type, code, message and stack, with long hex removed, and only a
 * summary of their cause: a chain client's error carries the request (signed calldata) in its
 * fields, and such a field must never reach a log line.
 */
function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: errorSummary(error) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    ...(typeof code === 'string' && { code }),
    message: stripLongHex(error.message),
    ...(error.stack && { stack: stripLongHex(error.stack) }),
    ...(error.cause !== undefined && { cause: errorSummary(error.cause) }),
  };
}

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level, redact: { paths: secretPaths, censor: '[redacted]' }, base: { service: 'vixpay' },
      serializers: { err: serializeError, error: serializeError },
      // The running call's request id (gRPC), on every line of that call.
      mixin: logFields,
    },
    destination as pino.DestinationStream | undefined,
  );
}

/**
 * Where `npm start` and `vixpay serve` log: on a terminal, readable lines (`formatLogLine`);
 * otherwise (a file, a pipe, a log collector) pino's JSON lines, one object each.
 */
export function consoleLogDestination(stream: NodeJS.WriteStream = process.stdout): NodeJS.WritableStream {
  if (!stream.isTTY) return stream;
  const colors = stream.hasColors?.() ?? false;
  return { write: (chunk: string) => stream.write(`${formatLogLine(chunk, colors)}\n`) } as NodeJS.WritableStream;
}

const levelLabels: Record<number, [string, number]> = {
  10: ['TRACE', 90], 20: ['DEBUG', 90], 30: ['INFO ', 32], 40: ['WARN ', 33], 50: ['ERROR', 31], 60: ['FATAL', 35],
};
/** Fields every line has, or that the line shows in its own place. */
const shownElsewhere = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'service', 'component', 'req', 'res', 'responseTime', 'err', 'error']);

/**
 * One pino JSON line as `12:04:05.123 INFO  http  GET /token 200 3 ms  reqId=req-1`: local time,
 * level, component, the message (a request's method, URL, status and time), then the other fields
 * as key=value. An error shows its message; at error level and above, its stack too.
 */
export function formatLogLine(line: string, colors = false): string {
  let record: Record<string, any>;
  try {
    record = JSON.parse(line) as Record<string, any>;
  } catch {
    return line.trimEnd();
  }
  const paint = (code: number, text: string) => (colors ? `\u001b[${code}m${text}\u001b[0m` : text);
  const [label, color] = levelLabels[record.level as number] ?? [String(record.level), 0];
  const time = new Date(record.time as number);
  const clock = `${[time.getHours(), time.getMinutes(), time.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':')}.${String(time.getMilliseconds()).padStart(3, '0')}`;
  const request = record.req ? `${record.req.method} ${record.req.url}` : '';
  const response = record.res ? `${record.res.statusCode}${typeof record.responseTime === 'number' ? ` ${record.responseTime.toFixed(1)} ms` : ''}` : '';
  const message = [record.msg, request, response].filter(Boolean).join('  ');
  const fields = Object.entries(record).filter(([key]) => !shownElsewhere.has(key)).map(([key, value]) => `${key}=${fieldText(value)}`);
  const failure = record.err ?? record.error;
  const failureText = failure === undefined ? [] : [typeof failure === 'string' ? failure : `${failure.type ?? 'Error'}: ${failure.message ?? ''}${failure.code ? ` (${failure.code})` : ''}`];
  const head = [paint(90, clock), paint(color, label), record.component ? paint(36, String(record.component)) : '', message, ...failureText, ...fields.map((f) => paint(90, f))]
    .filter(Boolean).join('  ');
  const stack = (record.level as number) >= 50 && typeof failure?.stack === 'string' ? `\n${paint(90, failure.stack.split('\n').slice(1).join('\n'))}` : '';
  return head + stack;
}

function fieldText(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value) ?? String(value);
}
