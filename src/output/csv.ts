/** RFC 4180 CSV: CRLF line ends, a cell quoted when it holds a quote, comma, CR or LF, quotes doubled. */

// A cell a spreadsheet would run as a formula: a leading sign, after any blanks or invisible characters.
// Built on first use: ICU makes a property's tables when the pattern is made, which a lookup never needs.
let formulaStart: RegExp | undefined;
const FORMULA_START = () =>
  (formulaStart ??=
    /^(?:[\t\r]|[\s\p{Default_Ignorable_Code_Point}]*[=+\-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b\u2212])/u);

/** The UTF-8 byte-order mark --bom writes before CSV (Excel then reads the file as UTF-8). */
export const BOM = '\ufeff';

/**
 * Whether a spreadsheet would run the text: a first character in printable ASCII other than a space
 * or a sign answers at once (no blank, invisible character or sign of another script can come first).
 */
function runsAsFormula(text: string): boolean {
  const c = text.charCodeAt(0);
  if (c > 0x20 && c < 0x7f && c !== 0x3d && c !== 0x2b && c !== 0x2d && c !== 0x40) return false;
  return FORMULA_START().test(text);
}

export function csvCell(value: unknown, formulaGuard = true): string {
  let text: string;
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') {
    text = formulaGuard && runsAsFormula(value) ? `'${value}` : value;
  } else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    text = String(value);
  } else {
    text = JSON.stringify(value);
    if (formulaGuard && runsAsFormula(text)) text = `'${text}`;
  }
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(values: readonly unknown[], formulaGuard = true): string {
  return `${values.map((v) => csvCell(v, formulaGuard)).join(',')}\r\n`;
}

/** Flattens nested objects into dotted keys (`law_firm.name`); arrays stay whole (one JSON cell). */
export function flatten(
  record: unknown,
  prefix = '',
  // No prototype: a server key "__proto__" is a column like any other, not a prototype change.
  out: Record<string, unknown> = Object.create(null) as Record<string, unknown>,
): Record<string, unknown> {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    out[prefix || 'value'] = record;
    return out;
  }
  const entries = Object.entries(record as Record<string, unknown>);
  if (entries.length === 0 && prefix) out[prefix] = null;
  for (const [k, v] of entries) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) flatten(v, key, out);
    else out[key] = v;
  }
  return out;
}

/** Column names in first-seen order across all records. */
export function unionKeys(rows: readonly Record<string, unknown>[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const k of Object.keys(row)) seen.add(k);
  return [...seen];
}
