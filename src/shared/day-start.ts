// One formatter per zone: building an Intl.DateTimeFormat costs far more than using one.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  // Stryker disable next-line ConditionalExpression,BlockStatement: the cache only saves building a formatter again (equivalent)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    // Stryker disable next-line CallExpression: the cache only saves building a formatter again (equivalent)
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * Epoch ms of the start of the day `epochMs` falls in, in `timeZone` (IANA): the console's daily
 * figures and a statement's day (docs/statements.md). A day of a daylight-saving change starts at
 * its own midnight's offset.
 */
export function startOfDay(epochMs: number, timeZone: string): number {
  const formatter = formatterOf(timeZone);
  const wall = (at: number) => {
    const p = Object.fromEntries(formatter.formatToParts(new Date(at)).map((part) => [part.type, Number(part.value)]));
    return { utc: Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!), midnight: Date.UTC(p.year!, p.month! - 1, p.day!) };
  };
  const now = wall(epochMs);
  const offset = now.utc - Math.floor(epochMs / 1000) * 1000;
  const guess = now.midnight - offset;
  // The offset at midnight itself (a daylight-saving change during the day moves it).
  return now.midnight - (wall(guess).utc - guess);
}
