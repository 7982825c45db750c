import { clean, joinSafe, type SafeText, style } from './text.js';
import { displayWidth } from './wrap.js';

export { displayWidth };

/** Aligned, borderless columns, as gh prints them. */

/** A cell: the server's text cleaned by the one sanitiser, on one line, trimmed. */
const cellText = (v: unknown) => clean(cell(v)).trim();

interface TableOptions {
  color: boolean;
  /** Terminal width: columns are fitted to it only when this is set (stdout is a terminal and no --wide). */
  width: number | undefined;
}

/** How a column gives way at a narrow terminal. */
export interface ColumnLayout {
  header: string;
  priority?: number | undefined;
  fit?: 'keep' | 'wrap' | undefined;
  min?: number | undefined;
}

interface TableLayout {
  text: SafeText;
  /** Headers of the columns left out to fit the width (in table order). */
  omitted: string[];
}

const GAP = '  ';
const WRAP_MIN = 20;

/** How a value reads in a table cell. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(cell).join(', ');
  return JSON.stringify(value);
}

/** The table as SafeText (see layoutTable); plain headers are `wrap` columns in priority of position. */
export function renderTable(
  headers: Array<string | ColumnLayout>,
  rows: unknown[][],
  opts: TableOptions,
): SafeText {
  return layoutTable(
    headers.map((h) => (typeof h === 'string' ? { header: h } : h)),
    rows,
    opts,
  ).text;
}

// Cells are cleaned before they are measured; widths count terminal cells (CJK two, combining marks none).
export function layoutTable(columns: ColumnLayout[], rows: unknown[][], opts: TableOptions): TableLayout {
  const body = rows.map((r) => columns.map((_, i) => cellText(r[i])));
  const head = columns.map((c) => clean(c.header.toUpperCase()));
  // Row by row: a list is never spread into arguments (the stack would overflow on a long one).
  const natural = head.map((h) => displayWidth(h));
  for (const r of body)
    for (let i = 0; i < r.length; i++) natural[i] = Math.max(natural[i] ?? 0, displayWidth(r[i] ?? ''));
  const plan =
    opts.width && opts.width > 0
      ? fitColumns(columns, head, natural, opts.width, longestWords(head, body), longestEnums(body))
      : undefined;
  const shown = plan ? plan.shown : columns.map((_, i) => i);
  const widths = plan ? plan.widths : natural;
  const wraps = (i: number) => plan?.wraps[i] === true;
  const lines: Array<SafeText | string> = [];
  const emit = (cells: string[], isHead: boolean) => {
    const parts = shown.map((i) => (wraps(i) ? wrapText(cells[i] ?? '', widths[i] ?? 0) : [cells[i] ?? '']));
    const height = parts.reduce((h, p) => Math.max(h, p.length), 1);
    for (let k = 0; k < height; k++) {
      const texts = parts.map((p) => p[k] ?? '');
      let last = texts.length - 1;
      while (last > 0 && texts[last] === '') last--;
      const pad = (t: string, j: number) =>
        j === last ? '' : ' '.repeat(Math.max(0, (widths[shown[j] ?? 0] ?? 0) - displayWidth(t)));
      // A body line is plain text (its cells cleaned above), cleaned once more as a line by joinSafe
      // below: one check a line, not three a cell. Only the header carries the tool's own styling.
      if (!isHead)
        lines.push(
          texts
            .slice(0, last + 1)
            .map((t, j) => t + pad(t, j))
            .join(GAP),
        );
      else {
        const pieces = texts.slice(0, last + 1).map((t, j) => {
          const styled = t !== '' ? style('bold', t, opts.color) : t;
          return j === last ? styled : joinSafe([styled, pad(t, j)]);
        });
        lines.push(joinSafe(pieces, GAP));
      }
    }
  };
  emit(head, true);
  for (const r of body) emit(r, false);
  const omitted = plan ? columns.filter((_, i) => !shown.includes(i)).map((c) => c.header) : [];
  lines.push(''); // the table ends with a line break
  return { text: joinSafe(lines, '\n'), omitted };
}

/** The one line on stderr when columns were left out: which, and how to see them. */
export function omittedNote(headers: string[], width = Number.POSITIVE_INFINITY): string {
  const names = headers.map((h) => h || '(unnamed)');
  const line = (list: string) => `Left out: ${list} (--wide shows all)`;
  const all = line(names.join(', '));
  if (displayWidth(all) <= width) return all;
  // Too many names for one line: as many as fit, then how many more, still one line.
  for (let k = names.length - 1; k >= 1; k--) {
    const some = line(`${names.slice(0, k).join(', ')} and ${names.length - k} more`);
    if (displayWidth(some) <= width) return some;
  }
  return line(`${names.length} columns`);
}

// Columns are taken in priority order while their narrowest form fits; the first is always taken.
export function fitColumns(
  columns: ColumnLayout[],
  head: string[],
  natural: number[],
  total: number,
  words: number[] = natural,
  enums: number[] = [],
): { shown: number[]; widths: number[]; wraps: boolean[] } {
  // A `keep` value wider than the terminal wraps like text rather than hide every other column.
  const wraps = columns.map((c, i) => (c.fit ?? 'wrap') === 'wrap' || (natural[i] ?? 0) > total);
  const isWrap = (i: number) => wraps[i] === true;
  // An enumerated value is one word: another column is left out before such a value is broken.
  const least = natural.map((n, i) => {
    if (!isWrap(i)) return n;
    const floor = Math.max(displayWidth(head[i] ?? ''), columns[i]?.min ?? WRAP_MIN);
    const whole = (enums[i] ?? 0) <= total ? (enums[i] ?? 0) : 0;
    return Math.min(n, Math.max(floor, whole));
  });
  const order = columns
    .map((c, i) => ({ i, p: c.priority ?? i + 1 }))
    .sort((a, b) => a.p - b.p || a.i - b.i)
    .map((x) => x.i);
  const taken = new Set<number>();
  let used = 0;
  for (const i of order) {
    const add = (least[i] ?? 0) + (taken.size > 0 ? GAP.length : 0);
    if (taken.size === 0 || used + add <= total) {
      taken.add(i);
      used += add;
    }
  }
  const widths = [...least];
  let slack = total - used;
  const widen = (i: number, upTo: number) => {
    if (slack < 0) widths[i] = Math.max(1, (widths[i] ?? 0) + slack); // the first column alone is too wide
    const extra = Math.max(0, Math.min(slack, upTo - (widths[i] ?? 0)));
    widths[i] = (widths[i] ?? 0) + extra;
    slack -= extra;
  };
  const wrapping = order.filter((i) => taken.has(i) && isWrap(i));
  for (const i of wrapping) widen(i, Math.min(natural[i] ?? 0, words[i] ?? 0));
  for (const i of wrapping) widen(i, natural[i] ?? 0);
  return { shown: [...taken].sort((a, b) => a - b), widths, wraps };
}

/** Where a line may break: after spaces, and after - _ / , (so `without_contrast`, `Rodríguez-Hernández`). */
const BREAKS = /[^\s\-_/,]*[-_/,]*\s*/gu;
/** As BREAKS, but an enumerated value or a name (`IMAGING_TOKEN`) is broken only when it cannot fit. */
const SEGMENT = /\(?[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\)?,?\s*|[^\s\-_/,]*[-_/,]*\s*/gu;
/** One unit of text: a visible escape of the sanitiser (`<U+202E>`) is never split. */
const UNIT = /<U\+[0-9A-F]{4,6}>|[\s\S]/gu;

/** Each column's longest unbreakable piece (cells wider than it would break a word). */
function longestWords(head: string[], body: string[][]): number[] {
  const out: number[] = [];
  const measure = (row: string[]) =>
    row.forEach((text, i) => {
      for (const seg of text.match(SEGMENT) ?? [])
        out[i] = Math.max(out[i] ?? 0, displayWidth(seg.trimEnd()));
    });
  measure(head);
  for (const row of body) measure(row);
  return out;
}

/** An enumerated value or a name: words joined by underscores (`without_and_with_contrast`, `(IMAGING_TOKEN)`). */
const ENUM = /^\(?[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+\)?$/;

/** Each column's longest enumerated value, as a whole cell or a word of one. */
function longestEnums(body: string[][]): number[] {
  const out: number[] = [];
  for (const row of body)
    row.forEach((text, i) => {
      for (const word of text.split(/[\s,]+/))
        if (word.length > (out[i] ?? 0) && ENUM.test(word)) out[i] = word.length;
    });
  return out;
}

/** Wraps one cleaned cell into lines of at most `width` cells; a word longer than that is broken. */
export function wrapText(text: string, width: number, breaks = SEGMENT): string[] {
  if (displayWidth(text) <= width) return [text];
  const lines: string[] = [];
  let line = '';
  for (const seg of text.match(breaks) ?? []) {
    if (seg === '') continue;
    const word = seg.trimEnd();
    if (line !== '' && displayWidth(line) + displayWidth(word) <= width) {
      line += seg;
      continue;
    }
    if (line.trimEnd() !== '') lines.push(line.trimEnd());
    line = '';
    if (displayWidth(word) <= width) {
      line = seg;
      continue;
    }
    if (breaks === SEGMENT && /_/.test(word)) {
      const parts = wrapText(seg, width, BREAKS);
      lines.push(...parts.slice(0, -1));
      line = (parts.at(-1) ?? '') + (/\s*$/.exec(seg)?.[0] ?? '');
      continue;
    }
    // Longer than the column: broken by cells, wide characters and escapes kept whole.
    let w = 0;
    for (const unit of seg.match(UNIT) ?? []) {
      const uw = displayWidth(unit);
      if (w + uw > width && line !== '' && uw > 0) {
        lines.push(line.trimEnd());
        line = '';
        w = 0;
      }
      line += unit;
      w += uw;
    }
  }
  if (line.trimEnd() !== '') lines.push(line.trimEnd());
  return lines.length > 0 ? lines : [''];
}

/** Label: value lines for one record. */
export function renderPairs(pairs: Array<[string, unknown]>, opts: { color: boolean }): SafeText {
  const width = pairs.reduce((w, [k]) => Math.max(w, displayWidth(k)), 0);
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
