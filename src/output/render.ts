import type { Sink } from '../io.js';
import { csvRow, flatten, unionKeys } from './csv.js';
import type { OutputFormat } from './format.js';

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

export interface ListRenderOptions<T> {
  format: OutputFormat;
  columns: Column<T>[];
  /** Shown on stderr when there are no records (exit stays 0). */
  emptyHint?: string;
}

/**
 * Renders a list: a table for people (through the one sanitiser, `sink.out`), or every field the
 * API sent for scripts (the raw stream, byte-faithful).
 */
export async function renderList<T>(sink: Sink, records: T[], opts: ListRenderOptions<T>): Promise<void> {
  const out = sink.data;
  if (records.length === 0 && opts.emptyHint) sink.err.line(opts.emptyHint);
  switch (opts.format) {
    case 'json':
      out.write(`${JSON.stringify(records, null, 2)}\n`);
      return;
    case 'ndjson':
      for (const r of records) out.write(`${JSON.stringify(r)}\n`);
      return;
    case 'csv': {
      if (records.length === 0) return;
      const flat = records.map((r) => flatten(r));
      const keys = unionKeys(flat);
      out.write(csvRow(keys)); // server keys: guarded like cells
      for (const row of flat) out.write(csvRow(keys.map((k) => row[k])));
      return;
    }
    case 'table': {
      if (records.length === 0) return;
      const { layoutTable, omittedNote } = await import('./table.js');
      const table = layoutTable(
        opts.columns,
        records.map((r) => opts.columns.map((c) => c.get(r))),
        { color: sink.color, width: sink.width },
      );
      sink.out.write(table.text);
      if (table.omitted.length > 0 && sink.width) sink.err.line(omittedNote(table.omitted));
      return;
    }
  }
}

/** Renders one record: label/value lines for people, the object as sent for scripts. */
export async function renderOne<T>(
  sink: Sink,
  record: T,
  format: OutputFormat,
  fields: (record: T) => Array<[string, unknown]>,
): Promise<void> {
  const out = sink.data;
  switch (format) {
    case 'json':
      out.write(`${JSON.stringify(record, null, 2)}\n`);
      return;
    case 'ndjson':
      out.write(`${JSON.stringify(record)}\n`);
      return;
    case 'csv': {
      const flat = flatten(record);
      const keys = Object.keys(flat);
      out.write(csvRow(keys)); // server keys: guarded like cells
      out.write(csvRow(keys.map((k) => flat[k])));
      return;
    }
    case 'table': {
      const { renderPairs } = await import('./table.js');
      sink.out.write(renderPairs(fields(record), { color: sink.color }));
      return;
    }
  }
}
