import type { Context } from '../context.js';
import { csvRow, flatten, unionKeys } from './csv.js';
import type { OutputFormat } from './format.js';

export interface Column<T> {
  header: string;
  get: (record: T) => unknown;
}

export interface ListRenderOptions<T> {
  format: OutputFormat;
  columns: Column<T>[];
  /** Shown on stderr when there are no records (exit stays 0). */
  emptyHint?: string;
}

/**
 * Renders a list: a table for people (through the one sanitiser, `ctx.out`), or every field the
 * API sent for scripts (the raw stream, byte-faithful).
 */
export async function renderList<T>(ctx: Context, records: T[], opts: ListRenderOptions<T>): Promise<void> {
  const out = ctx.io.stdout;
  if (records.length === 0 && opts.emptyHint) ctx.note(opts.emptyHint);
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
      const { renderTable } = await import('./table.js');
      ctx.out.write(
        renderTable(
          opts.columns.map((c) => c.header),
          records.map((r) => opts.columns.map((c) => c.get(r))),
          { color: ctx.colorLevel() > 0, width: ctx.io.stdoutIsTTY ? ctx.io.columns : undefined },
        ),
      );
      return;
    }
  }
}

/** Renders one record: label/value lines for people, the object as sent for scripts. */
export async function renderOne<T>(
  ctx: Context,
  record: T,
  format: OutputFormat,
  fields: (record: T) => Array<[string, unknown]>,
): Promise<void> {
  const out = ctx.io.stdout;
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
      ctx.out.write(renderPairs(fields(record), { color: ctx.colorLevel() > 0 }));
      return;
    }
  }
}

/** How a value reads in a table cell. */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(cell).join(', ');
  return JSON.stringify(value);
}
