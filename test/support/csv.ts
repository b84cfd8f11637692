/**
 * CSV as a spreadsheet reads it (RFC 4180): rows end with CRLF, cells are split on commas, a cell
 * that starts with a quote is quoted to its closing quote, a doubled quote inside is one quote. The
 * reader the statement and operator's-day tests read the platform's CSV back with.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++; } else cell += c;
  }
  if (cell !== '' || row.length > 0) { row.push(cell); rows.push(row); }
  return rows;
}

/** The rows after the header, each keyed by the header's names (a missing cell is ''). */
export function csvRecords(text: string): Array<Record<string, string>> {
  const [names, ...data] = parseCsv(text);
  return data.map((cells) => Object.fromEntries((names ?? []).map((name, i) => [name, cells[i] ?? ''])));
}
