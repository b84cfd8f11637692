declare global {
  interface JSON {
    rawJSON(text: string): unknown;
  }
}

/**
 * JSON text in which bigint values are written as exact JSON numbers (no precision lost,
 * no string quoting): amounts and block quantities stay bigint until this edge.
 */
export function stringifyJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? JSON.rawJSON(v.toString()) : v));
}
