import { clean, joinSafe, type SafeText, style } from './text.js';

/**
 * Aligned, borderless columns, as gh prints them. Our own rather than cli-table3: measured here,
 * cli-table3 took ~25 ms to load and render a 25-row table (a 20% slower `imaging icd10`),
 * for a layout this simple. Widths count terminal cells, so accented, CJK and emoji text lines up.
 */

/** A cell: the server's text cleaned by the one sanitiser, on one line, trimmed. */
const cellText = (v: unknown) => clean(cell(v)).trim();

export interface TableOptions {
  color: boolean;
  /** Terminal width; cells are cut to fit only when this is set (stdout is a terminal). */
  width: number | undefined;
}

const GAP = '  ';

/** How a value reads in a table cell. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(cell).join(', ');
  return JSON.stringify(value);
}

/** The table as SafeText: cells cleaned (escapes made visible) before they are measured and cut. */
export function renderTable(headers: string[], rows: unknown[][], opts: TableOptions): SafeText {
  const body = rows.map((r) => headers.map((_, i) => cellText(r[i])));
  const head = headers.map((h) => clean(h.toUpperCase()));
  const natural = head.map((h, i) => Math.max(displayWidth(h), ...body.map((r) => displayWidth(r[i] ?? ''))));
  const widths = opts.width ? fitWidths(natural, opts.width) : natural;
  const line = (cells: string[], isHead: boolean) => {
    const texts = cells.map((c, i) => {
      const w = widths[i] ?? 0;
      const text = displayWidth(c) > w ? truncate(c, w) : c;
      const last = i === cells.length - 1;
      return last ? text : text + ' '.repeat(Math.max(0, w - displayWidth(text)));
    });
    const last = texts.length - 1;
    if (last >= 0) texts[last] = (texts[last] ?? '').trimEnd();
    while (texts.length > 1 && texts[texts.length - 1] === '') {
      texts.pop();
      texts[texts.length - 1] = (texts[texts.length - 1] ?? '').trimEnd();
    }
    return joinSafe(
      texts.map((t) => (isHead ? style('bold', t, opts.color) : t)),
      GAP,
    );
  };
  return joinSafe([line(head, true), ...body.map((r) => line(r, false)), ''], '\n');
}

/** Label: value lines for one record. */
export function renderPairs(pairs: Array<[string, unknown]>, opts: { color: boolean }): SafeText {
  const width = Math.max(0, ...pairs.map(([k]) => displayWidth(k)));
  return joinSafe(
    [
      ...pairs.map(([k, v]) => {
        const value = cellText(v);
        const label = `${k}:`.padEnd(width + 1);
        return value
          ? joinSafe([style('bold', label, opts.color), value], '  ')
          : style('bold', label.trimEnd(), opts.color);
      }),
      '',
    ],
    '\n',
  );
}

/** Shrinks the widest columns until the row fits the terminal (never below 6 cells). */
export function fitWidths(natural: number[], total: number): number[] {
  const widths = [...natural];
  let sum = widths.reduce((a, b) => a + b, 0) + GAP.length * Math.max(0, widths.length - 1);
  while (sum > total) {
    let widest = 0;
    for (let i = 1; i < widths.length; i++) if ((widths[i] ?? 0) > (widths[widest] ?? 0)) widest = i;
    if ((widths[widest] ?? 0) <= 6) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
    sum--;
  }
  return widths;
}

const ZERO_WIDTH = /[\p{Mn}\p{Me}\p{Cf}]/u; // combining marks, variation selectors, zero-width space
const WIDE =
  /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\p{Extended_Pictographic}\u{20000}-\u{3FFFD}]/u;

/** Terminal cells a string takes: 0 for combining marks, 2 for wide (CJK, emoji), else 1. */
export function displayWidth(s: string): number {
  // Fast path: plain ASCII is one cell a character.
  if (/^[\x20-\x7e]*$/.test(s)) return s.length;
  let w = 0;
  for (const ch of s) {
    if (ZERO_WIDTH.test(ch)) continue;
    w += WIDE.test(ch) ? 2 : 1;
  }
  return w;
}

/** Cuts to `width` cells, ending in an ellipsis. */
export function truncate(s: string, width: number): string {
  if (width <= 1) return '…'.slice(0, width);
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = ZERO_WIDTH.test(ch) ? 0 : WIDE.test(ch) ? 2 : 1;
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return `${out}…`;
}
