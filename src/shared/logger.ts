import { pino, type Logger } from 'pino';
import { errorSummary, stripLongHex } from './redact.ts';

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
    },
    destination as pino.DestinationStream | undefined,
  );
}
