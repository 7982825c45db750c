import { once } from 'node:events';
import { Writable } from 'node:stream';
import { CliError } from '../errors.js';
import { num } from '../util/plural.js';

// An Excel workbook written as rows come: one sheet, the header frozen with an autofilter over it,
// typed cells. exceljs's streaming writer zips straight into the stream it is given (no temporary
// file); it alone is loaded (src/types/exceljs-writer.d.ts), here only, for this format.

/** Data rows a worksheet holds below its header row (1,048,576 rows in all). */
export const SHEET_ROWS = 1_048_575;

export function tooManyRows(what: string): CliError {
  return new CliError(
    `${what} more than the ${num(SHEET_ROWS)} rows an Excel sheet holds`,
    2,
    'Narrow it down (--param, --visit-status), or write CSV or NDJSON instead.',
  );
}

/** The total the API counted on page 1, when it is more than a sheet holds: exit 2 before writing. */
export function checkSheetRows(total: unknown): void {
  if (typeof total === 'number' && total > SHEET_ROWS) throw tooManyRows(`the API counts ${num(total)}:`);
}

/** Columns whose values are identifiers, codes or numbers that are not quantities: always text. */
const TEXT_COLUMN =
  /(?:^|[._])(?:id|ids|uuid|code|codes|zip|zipcode|zip_code|postal_code|postcode|reference|number|npi|tin|ein|phone|fax|mobile|accession_ids?)$/i;
// camelCase names of ids too: lawFirmId, patientID, caseIds.
const CAMEL_ID = /[a-z0-9](?:Id|ID|Ids|IDs|Uuid|UUID)$/;
const isTextColumn = (column: string) => TEXT_COLUMN.test(column) || CAMEL_ID.test(column);
/** Excel keeps 15 significant digits: a longer integer (an MRN, an account) shown as a number loses digits. */
const EXACT_DIGITS = 15;
/** The most characters an Excel cell holds; a longer text is cut, ending with this marker. */
export const CELL_CHARS = 32_767;
const CUT = '…[truncated]';
// A date-time with its zone (the API's timestamps), or a calendar date: a date in the sheet, in UTC.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss "UTC"';
const DATE_FORMAT = 'yyyy-mm-dd';
/** Excel's serial dates start in 1900; an earlier one (or a year past 9999) stays text. */
const FIRST = Date.UTC(1900, 2, 1);
const LAST = Date.UTC(10000, 0, 1);

/** Every part in range (Date.parse takes 2026-02-30 as March 2, and 24:00): else the text stays. */
function real(value: string): boolean {
  const [y, m, d, h = 0, min = 0, sec = 0] = (value.match(/\d+/g) ?? []).map(Number) as number[];
  const day = new Date(Date.UTC(y as number, (m as number) - 1, d));
  return day.getUTCDate() === d && day.getUTCMonth() === (m as number) - 1 && h < 24 && min < 60 && sec < 60;
}

export interface Cell {
  value: string | number | boolean | Date | null;
  numFmt?: string;
}

/**
 * One value as a typed cell: a number stays a number, a zoned date-time or a date becomes a date
 * (UTC), identifiers and codes are text whatever their type, anything else is text as CSV writes
 * it. Text is always a plain string cell: never a formula, whatever it starts with.
 */
export function cellOf(column: string, value: unknown): Cell {
  if (value === null || value === undefined) return { value: null };
  if (typeof value === 'string') {
    if (!isTextColumn(column)) {
      const date = DATE_TIME.test(value)
        ? { at: Date.parse(value), numFmt: DATE_TIME_FORMAT }
        : DATE.test(value)
          ? { at: Date.parse(`${value}T00:00:00Z`), numFmt: DATE_FORMAT }
          : undefined;
      if (date && date.at >= FIRST && date.at < LAST && real(value))
        return { value: new Date(date.at), numFmt: date.numFmt };
    }
    return { value: text(value) };
  }
  if (typeof value === 'number') {
    if (isTextColumn(column) || !Number.isFinite(value)) return { value: String(value) };
    // Whatever the column: an integer of more digits than Excel keeps is text (no 9.87E+19).
    if (Number.isInteger(value) && Math.abs(value) >= 10 ** EXACT_DIGITS)
      return { value: Math.abs(value) < 1e21 ? String(value) : BigInt(value).toString() };
    return { value };
  }
  if (typeof value === 'boolean') return { value };
  if (typeof value === 'bigint') return { value: String(value) };
  return { value: text(JSON.stringify(value)) };
}

// XML holds no lone surrogate and no U+FFFE/U+FFFF: each becomes U+FFFD (exceljs drops the control
// characters XML forbids), so the file always opens.
const NOT_XML = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|[\uFFFE\uFFFF]/g;
const text = (s: string): string => s.replace(NOT_XML, '\uFFFD');

/** A cell's text within Excel's limit (cut at a whole character, the marker at its end). */
function fits(s: string): string {
  if (s.length <= CELL_CHARS) return s;
  let end = CELL_CHARS - CUT.length;
  if (/[\uD800-\uDBFF]/.test(s.charAt(end - 1))) end--;
  return `${s.slice(0, end)}${CUT}`;
}

export interface Sheet {
  /** Adds a row, its cells in the header's order; past SHEET_ROWS it throws `tooManyRows`. */
  add(cells: readonly unknown[]): void;
  /** Waits while the output is behind (a slow reader), so rows do not pile up in memory. */
  flush(): Promise<void>;
  /** Ends the sheet and the workbook; every byte handed to the output. */
  close(): Promise<void>;
  readonly rows: number;
}

interface SheetOptions {
  /** The sheet's tab name. */
  name: string;
  header: readonly string[];
  signal?: AbortSignal | undefined;
  /** What a row past the sheet's size is called in the error ("the export has"). */
  what?: string;
  /** Data rows allowed (SHEET_ROWS; fewer in tests). */
  limit?: number;
  /** Told once when a cell's text was cut to Excel's 32,767 characters. */
  onNote?: ((text: string) => void) | undefined;
}

/** A sheet writing into `out` (never ended here: the caller commits its file). */
export async function openSheet(out: Writable, opts: SheetOptions): Promise<Sheet> {
  const { default: WorkbookWriter } = await import('exceljs/lib/stream/xlsx/workbook-writer.js');
  const header = [...opts.header];
  const forward = new Forward(out, opts.signal);
  let book: InstanceType<typeof WorkbookWriter> | undefined;
  let sheet: ReturnType<NonNullable<typeof book>['addWorksheet']> | undefined;
  let rows = 0;
  let cut = false;
  // Created with the first row: nothing reaches the output before there is something to write.
  const open = () => {
    if (sheet) return sheet;
    book = new WorkbookWriter({
      stream: forward,
      useStyles: true,
      useSharedStrings: false,
    });
    book.creator = 'imaging';
    sheet = book.addWorksheet(opts.name.replace(/[[\]:*?/\\]/g, ' ').slice(0, 31) || 'Sheet1', {
      views: [{ state: 'frozen', xSplit: 0, ySplit: 1, topLeftCell: 'A2', activeCell: 'A2' }],
    });
    sheet.columns = header.map((h) => ({ width: Math.min(Math.max(h.length + 2, 14), 40) }));
    const top = sheet.addRow(header.map(text));
    top.font = { bold: true };
    top.commit();
    return sheet;
  };
  return {
    get rows() {
      return rows;
    },
    add(cells) {
      if (rows >= (opts.limit ?? SHEET_ROWS)) throw tooManyRows(opts.what ?? 'there are');
      forward.check();
      const ws = open();
      const row = ws.addRow([]);
      cells.forEach((v, i) => {
        const cell = cellOf(header[i] ?? '', v);
        if (cell.value === null) return;
        if (typeof cell.value === 'string' && cell.value.length > CELL_CHARS) {
          cell.value = fits(cell.value);
          if (!cut)
            opts.onNote?.(
              `warning: a cell longer than Excel's ${num(CELL_CHARS)} characters was cut to fit (in column ${header[i] ?? i + 1}, row ${rows + 2}), ending with "${CUT}"`,
            );
          cut = true;
        }
        const c = row.getCell(i + 1);
        c.value = cell.value;
        if (cell.numFmt) c.numFmt = cell.numFmt;
      });
      row.commit();
      rows++;
    },
    async flush() {
      forward.check();
      while (forward.writableNeedDrain)
        await once(forward, 'drain', opts.signal ? { signal: opts.signal } : {});
      forward.check();
    },
    async close() {
      const ws = open();
      ws.autoFilter = {
        from: { row: 1, column: 1 },
        to: { row: rows + 1, column: Math.max(header.length, 1) },
      };
      ws.commit();
      await (book as NonNullable<typeof book>).commit();
      forward.check();
    },
  };
}

/**
 * The zip stream's destination: hands each chunk to `out` and waits while `out` is behind, and
 * never ends `out` (the caller's file is committed, or discarded, by the caller).
 */
class Forward extends Writable {
  private failure: unknown;
  constructor(
    private readonly out: Writable,
    private readonly signal: AbortSignal | undefined,
  ) {
    super({ highWaterMark: 1 << 16 });
    // Kept and thrown by the next add/flush/close: an unheard 'error' would end the process.
    this.on('error', (err) => {
      this.failure ??= err;
    });
  }
  check(): void {
    if (this.failure !== undefined) throw this.failure;
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.out.write(chunk)) {
      cb();
      return;
    }
    once(this.out, 'drain', this.signal ? { signal: this.signal } : {}).then(
      () => cb(),
      (err: Error) => cb(err),
    );
  }
}
