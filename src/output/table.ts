import { sanitise } from '../api/errors.js';
import { cell } from './render.js';

/**
 * Aligned, borderless columns, as gh prints them. Our own rather than cli-table3: measured here,
 * cli-table3 took ~25 ms to load and render a 25-row table (a 20% slower `imaging icd10`),
 * for a layout this simple. Widths count terminal cells, so accented, CJK and emoji text lines up.
 */

const ESC = '\u001b[';
const bold = (s: string, color: boolean) => (color ? `${ESC}1m${s}${ESC}22m` : s);

export interface TableOptions {
  color: boolean;
  /** Terminal width; cells are cut to fit only when this is set (stdout is a terminal). */
  width: number | undefined;
}

const GAP = '  ';

export function renderTable(headers: string[], rows: unknown[][], opts: TableOptions): string {
  const body = rows.map((r) => headers.map((_, i) => sanitise(cell(r[i]))));
  const head = headers.map((h) => h.toUpperCase());
  const natural = head.map((h, i) => Math.max(displayWidth(h), ...body.map((r) => displayWidth(r[i] ?? ''))));
  const widths = opts.width ? fitWidths(natural, opts.width) : natural;
  const line = (cells: string[], isHead: boolean) =>
    cells
      .map((c, i) => {
        const w = widths[i] ?? 0;
        const text = displayWidth(c) > w ? truncate(c, w) : c;
        const last = i === cells.length - 1;
        const padded = last ? text : text + ' '.repeat(Math.max(0, w - displayWidth(text)));
        return isHead ? bold(padded, opts.color) : padded;
      })
      .join(GAP)
      .trimEnd();
  return `${[line(head, true), ...body.map((r) => line(r, false))].join('\n')}\n`;
}

/** Label: value lines for one record. */
export function renderPairs(pairs: Array<[string, unknown]>, opts: { color: boolean }): string {
  const width = Math.max(0, ...pairs.map(([k]) => displayWidth(k)));
  return pairs
    .map(([k, v]) => `${bold(`${k}:`.padEnd(width + 1), opts.color)}  ${sanitise(cell(v))}`.trimEnd())
    .join('\n')
    .concat('\n');
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
