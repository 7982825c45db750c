import { Chalk } from 'chalk';
import Table from 'cli-table3';
import { sanitise } from '../api/errors.js';
import { cell } from './render.js';

const BORDERLESS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};

export interface TableOptions {
  color: boolean;
  /** Terminal width; cells are cut to fit only when this is set (stdout is a terminal). */
  width: number | undefined;
}

/** Aligned columns with no borders (as gh prints them); text from the server is stripped of control characters. */
export async function renderTable(headers: string[], rows: unknown[][], opts: TableOptions): Promise<string> {
  const chalk = new Chalk({ level: opts.color ? 1 : 0 });
  const body = rows.map((r) => r.map((v) => sanitise(cell(v))));
  const head = headers.map((h) => chalk.bold(h.toUpperCase()));
  const natural = headers.map((h, i) => Math.max(h.length, ...body.map((r) => displayWidth(r[i] ?? ''))));
  const table = new Table({
    head,
    chars: BORDERLESS,
    style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
    ...(opts.width ? { colWidths: fitWidths(natural, opts.width), wordWrap: false, truncate: '…' } : {}),
  });
  for (const r of body) table.push(r);
  return `${table
    .toString()
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')}\n`;
}

/** Label: value lines for one record. */
export function renderPairs(pairs: Array<[string, unknown]>, opts: { color: boolean }): string {
  const chalk = new Chalk({ level: opts.color ? 1 : 0 });
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${chalk.bold(`${k}:`.padEnd(width + 1))}  ${sanitise(cell(v))}\n`).join('');
}

/** Shrinks the widest columns until the row fits the terminal (never below 6 characters). */
export function fitWidths(natural: number[], total: number): number[] {
  const widths = [...natural];
  const gaps = 2 * Math.max(0, widths.length - 1);
  let sum = widths.reduce((a, b) => a + b, 0) + gaps;
  while (sum > total) {
    let widest = 0;
    for (let i = 1; i < widths.length; i++) if ((widths[i] ?? 0) > (widths[widest] ?? 0)) widest = i;
    if ((widths[widest] ?? 0) <= 6) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
    sum--;
  }
  return widths;
}

function displayWidth(s: string): number {
  // Close enough for choosing widths; cli-table3 itself measures wide characters exactly.
  return [...s].length;
}
