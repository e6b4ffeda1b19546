/**
 * CSV for spreadsheets (C-4, C-17): RFC 4180 cells with the formula-injection guard (a leading =, +, -, @, tab or
 * CR gets a `'`); a date-time is `YYYY-MM-DD HH:MM:SS` in UTC (its column's header says so), which Excel, Numbers
 * and LibreOffice read as a date-time rather than text; a day is `YYYY-MM-DD`. The file starts with a byte order
 * mark so a spreadsheet reads it as UTF-8 ("Chloé", not "ChloÃ©").
 */

/** The byte order mark an export starts with (C-17). */
export const CSV_BOM = '\uFEFF';

/** A date-time as a spreadsheet reads it, in UTC. */
export const csvDateTime = (value: Date) => value.toISOString().slice(0, 19).replace('T', ' ');

/** A calendar day (a due date), UTC. */
export const csvDay = (value: Date | null | undefined) => (value ? value.toISOString().slice(0, 10) : '');

/** One CSV cell; a Date is a date-time (csvDateTime). */
export function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : value instanceof Date ? csvDateTime(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const csvLine = (cells: readonly unknown[]) => `${cells.map(csvCell).join(',')}\r\n`;
