/**
 * Hex runs longer than one 32-byte word: calldata, signatures, signed raw transactions. A word
 * itself (a transaction hash, an address) stays readable for operators.
 */
const longHex = /(0x)?[0-9a-fA-F]{65,}/g;

/** Replaces every long hex run of a text with a marker, so nothing signed can be copied from it. */
export function stripLongHex(text: string): string {
  return text.replace(longHex, '[hex redacted]');
}

/**
 * A short, replay-safe description of any error: its name and its short message (viem's
 * `shortMessage` where there is one) with the node's own words after it (viem's `details`: "nonce
 * too high", where the short message says only "Transaction creation failed."), long hex removed.
 * Never the cause's request data.
 */
export function errorSummary(error: unknown): string {
  if (!(error instanceof Error)) return stripLongHex(String(error)).slice(0, 300);
  const { shortMessage, details } = error as { shortMessage?: unknown; details?: unknown };
  const text = (typeof shortMessage === 'string' ? shortMessage : error.message).split('\n')[0] ?? '';
  const said = typeof details === 'string' ? details.split('\n')[0] ?? '' : '';
  const why = said !== '' && !text.includes(said) ? ` (${said})` : '';
  return `${error.name}: ${stripLongHex(text + why)}`.slice(0, 300);
}
