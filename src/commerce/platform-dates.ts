/**
 * docs/interfaces.md#grpc-payments dates (`approval_date`, `reward_date`: yyyyMMddHHmmss) and notice dates (yyyyMMdd), in
 * the platform's time zone (config TIME_ZONE, default Asia/Seoul).
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function partsOf(epochMs: number, timeZone: string): Record<string, string> {
  let formatter = formatters.get(timeZone);
  // Stryker disable next-line ConditionalExpression,BlockStatement: the cache only saves building a formatter again (equivalent)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    // Stryker disable next-line CallExpression: the cache only saves building a formatter again (equivalent)
    formatters.set(timeZone, formatter);
  }
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(new Date(epochMs))) parts[part.type] = part.value;
  return parts;
}

/** `yyyyMMddHHmmss`, e.g. 20261122130501. */
export function formatDateTime(epochMs: number, timeZone: string): string {
  const p = partsOf(epochMs, timeZone);
  return `${p.year}${p.month}${p.day}${p.hour}${p.minute}${p.second}`;
}

/** `yyyyMMdd`, e.g. 20261122. */
export function formatDate(epochMs: number, timeZone: string): string {
  return formatDateTime(epochMs, timeZone).slice(0, 8);
}
