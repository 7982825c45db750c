import { once } from 'node:events';
import { type PageMeta, paginate } from '../api/paginate.js';
import type { Query } from '../api/url.js';
import type { Context } from '../context.js';
import { type Column, renderList } from '../output/render.js';

export interface ListCommandOptions<T> {
  path: string;
  key?: string;
  query?: Query;
  page?: number | undefined;
  perPage?: number | undefined;
  all?: boolean | undefined;
  columns: Column<T>[];
  /** Plural noun for hints ("ICD-10 codes"). */
  noun: string;
  emptyHint: string;
}

/**
 * A paginated list: one page, or every page with --all. NDJSON and JSON stream page by page, each
 * page written (waiting for the reader when it is slower) before the next is asked for, so memory
 * stays flat however many pages there are; JSON keeps the same bytes as one pretty-printed array.
 */
export async function listCommand<T>(ctx: Context, opts: ListCommandOptions<T>): Promise<number> {
  const format = ctx.format('table');
  const client = ctx.api();
  const records: T[] = [];
  let lastMeta: PageMeta | undefined;
  if (format === 'ndjson' || format === 'json') {
    const out = ctx.io.stdout;
    let count = 0;
    for await (const page of paginate<T>(client, opts)) {
      lastMeta = page.meta;
      let chunk = '';
      for (const r of page.items) {
        // `JSON.stringify([r], null, 2)` is "[\n  …\n]": the record as it sits inside the whole array.
        chunk +=
          format === 'ndjson'
            ? `${JSON.stringify(r)}\n`
            : `${count === 0 ? '[\n' : ',\n'}${JSON.stringify([r], null, 2).slice(2, -2)}`;
        count++;
      }
      if (chunk !== '' && !out.write(chunk)) await once(out, 'drain', { signal: ctx.signal });
    }
    if (format === 'json') out.write(count === 0 ? '[]\n' : '\n]\n');
    if (count === 0 && (format === 'json' || lastMeta?.total_count === 0)) ctx.note(opts.emptyHint);
    return 0;
  }
  for await (const page of paginate<T>(client, opts)) {
    lastMeta = page.meta;
    records.push(...page.items);
  }
  await renderList(ctx, records, { format, columns: opts.columns, emptyHint: opts.emptyHint });
  if (
    !opts.all &&
    format === 'table' &&
    lastMeta &&
    typeof lastMeta.total_pages === 'number' &&
    lastMeta.total_pages > 1
  ) {
    const current = lastMeta.current_page ?? opts.page ?? 1;
    const total = typeof lastMeta.total_count === 'number' ? ` (${lastMeta.total_count} ${opts.noun})` : '';
    const next = lastMeta.next_page ? ` Next: --page ${lastMeta.next_page}, or --all.` : '';
    ctx.note(`Page ${current} of ${lastMeta.total_pages}${total}.${next}`);
  }
  return 0;
}
