import { stripLongHex } from './redact.ts';

interface Described {
  shortMessage?: unknown;
  url?: unknown;
  path?: unknown;
  address?: unknown;
  port?: unknown;
  cause?: unknown;
}

/**
 * One line for an operator's terminal: what failed and the URL, file or address involved (viem's
 * `url`, a system error's `path` or `address:port`), followed by its causes' own lines. No stack,
 * no request data (long hex removed).
 */
export function describeFailure(error: unknown, depth = 0): string {
  if (!(error instanceof Error)) return stripLongHex(String(error).split('\n')[0] ?? '');
  const e = error as Error & Described;
  let text = typeof e.shortMessage === 'string' ? e.shortMessage : (e.message.split('\n')[0] ?? '');
  const where = typeof e.url === 'string' ? e.url
    : typeof e.path === 'string' ? e.path
      : typeof e.address === 'string' ? `${e.address}${typeof e.port === 'number' ? `:${e.port}` : ''}` : undefined;
  if (where && !text.includes(where)) text += ` (${where})`;
  if (e.cause !== undefined && depth < 3) {
    const cause = describeFailure(e.cause, depth + 1);
    if (cause && !text.includes(cause)) text += `: ${cause}`;
  }
  return stripLongHex(text);
}
