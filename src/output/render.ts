import type { Sink } from '../io.js';
import { BOM, csvRow, flatten, unionKeys } from './csv.js';
import { csvColumns, type FieldChoice, pick, valueAt } from './fields.js';
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
  /** The resource's documented fields (stable CSV columns) and the --fields choice. */
  fields?: FieldChoice;
}

/**
 * Renders a list: a table for people (through the one sanitiser, `sink.out`), or every field the
 * API sent for scripts (the raw stream, byte-faithful). With --fields, exactly those fields.
 */
/** Field names whose values are identifiers or codes: shown whole in a table, never wrapped. */
const KEEP_WHOLE = /(?:^|[._])(?:id|ids|code|codes|reference|accession_ids?|slug|status|number)$/;

export async function renderList<T>(sink: Sink, records: T[], opts: ListRenderOptions<T>): Promise<void> {
  const out = sink.data;
  const chosen = opts.fields?.chosen;
  const shape = (r: T): unknown => (chosen ? pick(r, chosen) : r);
  if (records.length === 0 && opts.emptyHint) sink.err.line(opts.emptyHint);
  switch (opts.format) {
    case 'json':
      out.write(`${JSON.stringify(chosen ? records.map(shape) : records, null, 2)}\n`);
      return;
    case 'ndjson':
      for (const r of records) out.write(`${JSON.stringify(shape(r))}\n`);
      return;
    case 'csv': {
      if (records.length === 0) return;
      const guard = sink.csv?.formulaGuard ?? true;
      if (sink.csv?.bom) out.write(BOM);
      if (opts.fields) {
        // Stable: the documented fields first, in a fixed order, then the others sorted.
        const keys = chosen ?? csvColumns(records, opts.fields.documented);
        out.write(csvRow(keys, guard)); // server keys: guarded like cells
        for (const r of records)
          out.write(
            csvRow(
              keys.map((k) => valueAt(r, k)),
              guard,
            ),
          );
        return;
      }
      const flat = records.map((r) => flatten(r));
      const keys = unionKeys(flat);
      out.write(csvRow(keys, guard)); // server keys: guarded like cells
      for (const row of flat)
        out.write(
          csvRow(
            keys.map((k) => row[k]),
            guard,
          ),
        );
      return;
    }
    case 'table': {
      if (records.length === 0) return;
      const { layoutTable, omittedNote } = await import('./table.js');
      // Fields the user picked: in the order given; identifiers and codes are never cut.
      const columns: Column<T>[] = chosen
        ? chosen.map((f) => ({
            header: f,
            get: (r: T) => valueAt(r, f),
            ...(KEEP_WHOLE.test(f) ? { fit: 'keep' as const } : {}),
          }))
        : opts.columns;
      const table = layoutTable(
        columns,
        records.map((r) => columns.map((c) => c.get(r))),
        { color: sink.color, width: sink.width },
      );
      sink.out.write(table.text);
      if (table.omitted.length > 0 && sink.width) sink.err.line(omittedNote(table.omitted, sink.width));
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
  choice?: FieldChoice,
): Promise<void> {
  const out = sink.data;
  const chosen = choice?.chosen;
  const shaped: unknown = chosen ? pick(record, chosen) : record;
  switch (format) {
    case 'json':
      out.write(`${JSON.stringify(shaped, null, 2)}\n`);
      return;
    case 'ndjson':
      out.write(`${JSON.stringify(shaped)}\n`);
      return;
    case 'csv': {
      const guard = sink.csv?.formulaGuard ?? true;
      if (sink.csv?.bom) out.write(BOM);
      if (choice) {
        const keys = chosen ?? csvColumns([record], choice.documented);
        out.write(csvRow(keys, guard)); // server keys: guarded like cells
        out.write(
          csvRow(
            keys.map((k) => valueAt(record, k)),
            guard,
          ),
        );
        return;
      }
      const flat = flatten(record);
      const keys = Object.keys(flat);
      out.write(csvRow(keys, guard)); // server keys: guarded like cells
      out.write(
        csvRow(
          keys.map((k) => flat[k]),
          guard,
        ),
      );
      return;
    }
    case 'table': {
      const { renderPairs } = await import('./table.js');
      const pairs: Array<[string, unknown]> = chosen
        ? chosen.map((f) => [f, valueAt(record, f)])
        : fields(record);
      sink.out.write(renderPairs(pairs, { color: sink.color }));
      return;
    }
  }
}
