import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Sink } from '../io.js';
import { BOM, csvRow, flatten, unionKeys } from './csv.js';
import { csvColumns, type FieldChoice, fieldReader, fieldValue, pick } from './fields.js';
import { assertNever, type OutputFormat } from './format.js';
import { cleanBlock } from './text.js';

// The one output writer: every command prints records through `write`, in any format, from an array or from
// pages as they come.

export interface Column<T> {
  header: string;
  get: (record: T) => unknown;
  /** At a narrow terminal (output/table.ts): 1 is kept longest; default: the column's position. */
  priority?: number;
  /** `keep`: identifiers, codes, enumerations, never cut; `wrap` (default): wraps under the column. */
  fit?: 'keep' | 'wrap';
  /** Narrowest a `wrap` column gets (default 20 cells). */
  min?: number;
}

/** Records: all at once, or in batches (pages) as they arrive. */
export type Records<T> = readonly T[] | AsyncIterable<readonly T[]>;

interface WriteOptions<T> {
  format: OutputFormat;
  sink: Sink;
  /** The resource's documented fields (stable CSV columns) and the --fields choice. */
  fields?: FieldChoice | undefined;
  columns?: Column<T>[] | undefined;
  /** One record's label/value lines in a table. */
  pairs?: ((record: T) => Array<[string, unknown]>) | undefined;
  /** Shown on stderr when there are no records (exit stays 0); asked once the records are read. */
  emptyHint?: string | (() => string | undefined) | undefined;
  /** Stops waiting for a slow reader of standard output. */
  signal?: AbortSignal | undefined;
  /** xlsx: the sheet's tab name (e.g. "Referrals"). */
  sheet?: string | undefined;
  /** Told the records written so far, each time a batch has gone out. */
  onWritten?: ((count: number) => void) | undefined;
}

/** Field names whose values are identifiers or codes: shown whole in a table, never wrapped. */
const KEEP_WHOLE = /(?:^|[._])(?:id|ids|code|codes|reference|accession_ids?|slug|status|number)$/;

// Writes records: a table for people (through the one sanitiser, `sink.out`), or every field the API sent for
// scripts (the raw stream, byte-faithful); with --fields, exactly those fields.
export async function write<T>(input: Records<T> | { one: T }, opts: WriteOptions<T>): Promise<number> {
  if ('one' in input) {
    await writeOne(input.one, opts);
    return 1;
  }
  switch (opts.format) {
    case 'json':
    case 'ndjson':
      return writeStream(input, opts.format, opts);
    case 'csv':
      return writeCsv(await collect(input), opts);
    case 'table':
      return writeTable(await collect(input), opts);
    case 'xlsx':
      return writeXlsx(input, opts);
    default:
      return assertNever(opts.format);
  }
}

async function writeStream<T>(
  input: Records<T>,
  format: 'json' | 'ndjson',
  opts: WriteOptions<T>,
): Promise<number> {
  const { sink } = opts;
  const enc = encoder(format, { json: 'pretty', chosen: opts.fields?.chosen });
  let count = 0;
  for await (const batch of batches(input)) {
    if (batch.length === 0) continue;
    const pieces: string[] = count === 0 ? [enc.head] : [];
    for (const r of batch) enc.record(pieces, r, count++);
    await send(sink.data, utf8Of(onTerminal(sink, format, pieces)), opts.signal);
    opts.onWritten?.(count);
  }
  await send(sink.data, utf8Of(count === 0 ? [enc.head, enc.tail(0)] : [enc.tail(count)]), opts.signal);
  if (count === 0) sayEmpty(opts);
  return count;
}

async function writeCsv<T>(records: readonly T[], opts: WriteOptions<T>): Promise<number> {
  const { sink } = opts;
  if (records.length === 0) {
    sayEmpty(opts);
    return 0;
  }
  const guard = sink.csv?.formulaGuard ?? true;
  const pieces: string[] = sink.csv?.bom ? [BOM] : [];
  if (opts.fields) {
    // Stable: the documented fields first, in a fixed order, then the others sorted.
    const keys = opts.fields.chosen ?? csvColumns(records, opts.fields.documented);
    pieces.push(csvRow(keys, guard)); // server keys: guarded like cells
    const readers = keys.map((k) => fieldReader(k, opts.fields));
    for (const r of records)
      pieces.push(
        csvRow(
          readers.map((read) => read(r)),
          guard,
        ),
      );
  } else {
    const flat = records.map((r) => flatten(r));
    const keys = unionKeys(flat);
    pieces.push(csvRow(keys, guard)); // server keys: guarded like cells
    for (const row of flat)
      pieces.push(
        csvRow(
          keys.map((k) => row[k]),
          guard,
        ),
      );
  }
  await send(sink.data, utf8Of(onTerminal(sink, 'csv', pieces)), opts.signal);
  return records.length;
}

/** A workbook of the same columns and values as CSV, typed (output/xlsx.ts); the header alone when empty. */
async function writeXlsx<T>(input: Records<T>, opts: WriteOptions<T>): Promise<number> {
  const { openSheet, SHEET_ROWS, tooManyRows } = await import('./xlsx.js');
  // Read whole before anything is written (the columns come from every record), and stopped as
  // soon as there are more than a sheet holds.
  const records: T[] = [];
  for await (const batch of batches(input))
    for (const r of batch) {
      if (records.length === SHEET_ROWS) throw tooManyRows('there are');
      records.push(r);
    }
  let keys: readonly string[];
  let rows: Iterable<unknown[]>;
  if (opts.fields) {
    const k = opts.fields.chosen ?? csvColumns(records, opts.fields.documented);
    keys = k;
    const readers = k.map((key) => fieldReader(key, opts.fields));
    rows = records.map((r) => readers.map((read) => read(r)));
  } else {
    const flat = records.map((r) => flatten(r));
    const k = unionKeys(flat);
    keys = k;
    rows = flat.map((row) => k.map((key) => row[key]));
  }
  const sheet = await openSheet(opts.sink.data, {
    name: opts.sheet ?? 'Sheet1',
    header: keys,
    signal: opts.signal,
    onNote: (text) => opts.sink.err.line(text),
  });
  for (const row of rows) sheet.add(row);
  await sheet.close();
  if (records.length === 0) sayEmpty(opts);
  return records.length;
}

async function writeTable<T>(records: readonly T[], opts: WriteOptions<T>): Promise<number> {
  const { sink } = opts;
  const chosen = opts.fields?.chosen;
  if (records.length === 0) {
    sayEmpty(opts);
    return 0;
  }
  const { layoutTable, omittedNote } = await import('./table.js');
  // Fields the user picked: in the order given; identifiers and codes are never cut.
  const columns: Column<T>[] = chosen
    ? chosen.map((f) => ({
        header: f,
        get: fieldReader(f, opts.fields),
        ...(KEEP_WHOLE.test(f) ? { fit: 'keep' as const } : {}),
      }))
    : (opts.columns ?? []);
  const table = layoutTable(
    columns,
    records.map((r) => columns.map((c) => c.get(r))),
    { color: sink.color, width: sink.width },
  );
  sink.out.write(table.text);
  if (table.omitted.length > 0 && sink.width) sink.err.line(omittedNote(table.omitted, sink.width));
  return records.length;
}

/** One record: label/value lines for people, the object as sent (or its chosen fields) for scripts. */
async function writeOne<T>(record: T, opts: WriteOptions<T>): Promise<void> {
  const { format, sink } = opts;
  const choice = opts.fields;
  const chosen = choice?.chosen;
  const out = { write: (text: string) => sink.data.write(onTerminal(sink, format, [text]).join('')) };
  switch (format) {
    case 'json':
    case 'ndjson':
      writeJson(sink, chosen ? pick(record, chosen) : record, format);
      return;
    case 'csv': {
      const guard = sink.csv?.formulaGuard ?? true;
      let keys: readonly string[];
      let values: unknown[];
      if (choice) {
        keys = chosen ?? csvColumns([record], choice.documented);
        values = keys.map((k) => fieldValue(record, k, choice));
      } else {
        const flat = flatten(record);
        keys = Object.keys(flat);
        values = keys.map((k) => flat[k]);
      }
      // The header holds server keys: guarded like cells.
      out.write(`${sink.csv?.bom ? BOM : ''}${csvRow(keys, guard)}${csvRow(values, guard)}`);
      return;
    }
    case 'xlsx':
      await writeXlsx([record], opts);
      return;
    case 'table': {
      const pairs: Array<[string, unknown]> = chosen
        ? chosen.map((f) => [f, fieldValue(record, f, choice)])
        : (opts.pairs?.(record) ?? []);
      const { renderPairs } = await import('./table.js');
      sink.out.write(renderPairs(pairs, { color: sink.color }));
      return;
    }
    default:
      assertNever(format);
  }
}

/** The text formats written record by record as they come (a table needs every record first; a workbook is not text). */
export type StreamFormat = Exclude<OutputFormat, 'table' | 'xlsx'>;

/** How records become text in a stream format: what comes first, each record, what comes last. */
interface Encoder {
  /** Before the first record (also when there is none). */
  readonly head: string;
  /** Appends the pieces of the record that has `index` records before it. */
  record(pieces: string[], record: unknown, index: number): void;
  /** After the last of `count` records. */
  tail(count: number): string;
}

interface EncoderOptions {
  // JSON: `pretty` is one array as `JSON.stringify(records, null, 2)` writes it; `line` one record a line
  // inside `[` and `]` (the export's).
  json?: 'pretty' | 'line';
  /** Only these fields of each record, named as given. */
  chosen?: readonly string[] | undefined;
  /** CSV: the header and each record's cells in its order. */
  csv?: {
    header: readonly string[];
    cells: (record: unknown) => readonly unknown[];
    guard: boolean;
    bom: boolean;
  };
}

/** The one framing of each stream format. */
export function encoder(format: StreamFormat, opts: EncoderOptions = {}): Encoder {
  const shape = opts.chosen ? (r: unknown) => pick(r, opts.chosen!) : (r: unknown) => r;
  switch (format) {
    case 'json': {
      // `JSON.stringify([r], null, 2)` is "[\n  …\n]": the record as it sits inside the whole array.
      const text =
        opts.json === 'line'
          ? (r: unknown) => JSON.stringify(shape(r))
          : (r: unknown) => JSON.stringify([shape(r)], null, 2).slice(2, -2);
      return {
        head: '[',
        record: (pieces, r, index) => pieces.push(index === 0 ? '\n' : ',\n', text(r)),
        tail: (count) => (count === 0 ? ']\n' : '\n]\n'),
      };
    }
    case 'ndjson':
      return {
        head: '',
        record: (pieces, r) => pieces.push(JSON.stringify(shape(r)), '\n'),
        tail: () => '',
      };
    case 'csv': {
      const csv = opts.csv;
      if (!csv) throw new Error('internal: CSV written record by record needs its columns');
      return {
        head: `${csv.bom ? BOM : ''}${csvRow(csv.header, csv.guard)}`,
        record: (pieces, r) => pieces.push(csvRow(csv.cells(r), csv.guard)),
        tail: () => '',
      };
    }
    default:
      return assertNever(format);
  }
}

/**
 * One value as JSON (pretty) or one NDJSON line, on the data stream: what every command that answers with
 * a single object writes, escaped on a terminal as every other JSON is.
 */
export function writeJson(sink: Sink, value: unknown, format: 'json' | 'ndjson' = 'json'): void {
  const text = format === 'json' ? JSON.stringify(value, null, 2) : JSON.stringify(value);
  sink.data.write(onTerminal(sink, format, [`${text}\n`]).join(''));
}

export function utf8Of(pieces: readonly string[]): Buffer {
  let total = 0;
  for (const p of pieces) total += Buffer.byteLength(p);
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const p of pieces) at += out.write(p, at);
  return out;
}

/** Writes bytes and waits while the reader is behind. */
export async function send(out: Writable, bytes: Buffer, signal?: AbortSignal): Promise<void> {
  if (bytes.length === 0 || out.write(bytes)) return;
  await once(out, 'drain', signal ? { signal } : {});
}

async function* batches<T>(input: Records<T>): AsyncIterable<readonly T[]> {
  if (Symbol.asyncIterator in input) yield* input;
  else yield input as readonly T[];
}

/** Every record of every batch, one by one: never a batch spread into arguments. */
async function collect<T>(input: Records<T>): Promise<readonly T[]> {
  if (!(Symbol.asyncIterator in input)) return input as readonly T[];
  const all: T[] = [];
  for await (const batch of input) for (const r of batch) all.push(r);
  return all;
}

function sayEmpty<T>(opts: WriteOptions<T>): void {
  const hint = typeof opts.emptyHint === 'function' ? opts.emptyHint() : opts.emptyHint;
  if (hint) opts.sink.err.line(hint);
}

// Characters a terminal acts on or hides that JSON.stringify leaves raw: DEL, C1, bidi and format.
// Built when first needed (a terminal): a Unicode property class costs its tables at creation.
let jsonUnsafe: RegExp | undefined;
const JSON_UNSAFE = () => (jsonUnsafe ??= /[\x7f-\x9f\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/gu);

/**
 * Data for a terminal carries nothing it acts on: JSON escapes those characters as \uXXXX (the
 * same data for a parser), CSV rows go through the one sanitiser. Piped, the bytes are as sent.
 */
function onTerminal(sink: Sink, format: OutputFormat, pieces: string[]): string[] {
  return sink.tty ? terminalSafe(format, pieces) : pieces;
}

/** Data bound for a terminal (a writer's, an export's): what the terminal would act on, escaped. */
export function terminalSafe(format: OutputFormat, pieces: string[]): string[] {
  const hex = (ch: string) =>
    ch.replace(/[\s\S]/g, (u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`);
  // A CSV row's CRLF and a --bom mark are the tool's own: only the text between goes through.
  const csv = (p: string) =>
    p
      .split('\r\n')
      .map((l) => (l.startsWith(BOM) ? BOM + cleanBlock(l.slice(1)) : cleanBlock(l)))
      .join('\r\n');
  return pieces.map(format === 'csv' ? csv : (p) => p.replace(JSON_UNSAFE(), hex));
}
