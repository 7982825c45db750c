import { once } from 'node:events';
import type { ListEndpoint } from '../api/endpoints/list.js';
import { type PageMeta, PageWalk, paginate } from '../api/pages.js';
import { checkListItems, readingAnswer } from '../api/shape.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { checkCost, remainingAfterFirst } from '../meter/cost.js';
import { type FieldChoice, pick } from '../output/fields.js';
import { type Column, renderList } from '../output/render.js';
import { flag, int } from './options.js';

export interface ListCommandOptions<T> {
  endpoint: ListEndpoint<T>;
  page?: number | undefined;
  perPage?: number | undefined;
  all?: boolean | undefined;
  columns: Column<T>[];
  /** The documented fields and the --fields choice (checked before any request). */
  fields?: FieldChoice;
  /** Shape check of one record before a table shows it (throws UnreadableAnswerError). */
  check?: (record: unknown, index: number) => void;
  /** Plural noun for hints ("ICD-10 codes"). */
  noun: string;
  emptyHint: string;
  /** Answers may come from (and go to) the reference-data cache (ICD-10 only). */
  cached?: boolean;
}

/**
 * A paginated list: one page, or every page with --all. NDJSON and JSON stream page by page, each
 * page written (waiting for the reader when it is slower) before the next is asked for, so memory
 * stays flat however many pages there are; JSON keeps the same bytes as one pretty-printed array.
 */
export async function listCommand<T>(ctx: Context, opts: ListCommandOptions<T>): Promise<number> {
  const format = ctx.format('table');
  const client = opts.cached ? ctx.referenceApi() : ctx.api();
  const walkOpts = { ...opts.endpoint, page: opts.page, perPage: opts.perPage, all: opts.all };
  const records: T[] = [];
  let lastMeta: PageMeta | undefined;
  let costChecked = false;
  const walk = new PageWalk(`the ${opts.noun}`, { requireIds: true });
  if (format === 'ndjson' || format === 'json') {
    // Streamed page by page: each page is written (waiting for a slower reader) before the next is
    // asked for, so memory stays flat; JSON keeps the bytes of one pretty-printed array.
    const out = ctx.io.stdout;
    const chosen = opts.fields?.chosen;
    let count = 0;
    for await (const page of paginate<T>(client, walkOpts, walk)) {
      if (!costChecked) costChecked = await costOfAll(ctx, opts, page);
      lastMeta = page.meta;
      let chunk = '';
      for (const item of page.items) {
        const r = chosen ? pick(item, chosen) : item;
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
    if (walk.duplicates > 0) ctx.note(duplicatesNote(walk.duplicates));
    const pastEnd = count === 0 ? pastLastPage(opts, lastMeta) : undefined;
    if (pastEnd) ctx.note(pastEnd);
    else if (count === 0 && (format === 'json' || lastMeta?.total_count === 0)) ctx.note(opts.emptyHint);
    return 0;
  }
  for await (const page of paginate<T>(client, walkOpts, walk)) {
    if (!costChecked) costChecked = await costOfAll(ctx, opts, page);
    lastMeta = page.meta;
    const offset = records.length;
    readingAnswer(page.requestId, () => {
      checkListItems(page.items, opts.noun);
      if (opts.check && format === 'table')
        for (const [i, r] of page.items.entries()) opts.check(r, offset + i);
    });
    records.push(...page.items);
  }
  if (walk.duplicates > 0) ctx.note(duplicatesNote(walk.duplicates));
  // An empty page past the last one is not "nothing matches": say which pages there are instead.
  const pastEnd = records.length === 0 ? pastLastPage(opts, lastMeta) : undefined;
  await renderList(ctx.sink(), records, {
    format,
    columns: opts.columns,
    emptyHint: pastEnd ?? opts.emptyHint,
    ...(opts.fields ? { fields: opts.fields } : {}),
  });
  if (
    !pastEnd &&
    !opts.all &&
    format === 'table' &&
    lastMeta &&
    typeof lastMeta.total_pages === 'number' &&
    lastMeta.total_pages > 1
  ) {
    // meta comes from the server: a hint shows numbers only, and is left out when they are not.
    const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);
    const current = lastMeta.current_page === undefined ? (opts.page ?? 1) : num(lastMeta.current_page);
    const total = num(lastMeta.total_count) !== undefined ? ` (${lastMeta.total_count} ${opts.noun})` : '';
    const next = num(lastMeta.next_page) ? ` Next: --page ${lastMeta.next_page}, or --all.` : '';
    if (current !== undefined && num(lastMeta.total_pages) !== undefined)
      ctx.note(`Page ${current} of ${lastMeta.total_pages}${total}.${next}`);
  }
  return 0;
}

/** After page 1 of --all: what the remaining pages cost the sandbox allowance (meter/cost.ts). */
async function costOfAll<T>(
  ctx: Context,
  opts: ListCommandOptions<T>,
  first: { items: unknown[]; meta: PageMeta | undefined },
): Promise<true> {
  if (!opts.all) return true;
  const remaining = remainingAfterFirst(
    first.meta?.total_pages,
    first.meta?.total_count,
    first.items.length || opts.perPage,
  );
  await checkCost(ctx, remaining, `Listing every page of the ${opts.noun}`);
  return true;
}

/**
 * The note for an empty `--page N` beyond the server's `total_pages` (numbers only, from meta):
 * "--page 99 is past the last page: ICD-10 codes have pages 1 to 2 (45 in all)."
 */
export function pastLastPage(
  opts: { page?: number | undefined; all?: boolean | undefined; noun: string },
  meta: PageMeta | undefined,
): string | undefined {
  if (opts.all || opts.page === undefined || opts.page <= 1 || !meta) return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);
  const pages = num(meta.total_pages);
  if (pages === undefined || opts.page <= pages) return undefined;
  const count = num(meta.total_count);
  const all = count !== undefined ? ` (${count} in all)` : '';
  if (pages === 0) return `--page ${opts.page} is past the last page: there are no ${opts.noun}.`;
  const which = pages === 1 ? 'one page, --page 1' : `pages 1 to ${pages}`;
  return `--page ${opts.page} is past the last page: the ${opts.noun} have ${which}${all}.`;
}

/** Records a page walk dropped because an earlier page had them (same id). */
export function duplicatesNote(n: number): string {
  return `warning: ${n} record${n === 1 ? '' : 's'} came again on a later page (same id) and ${n === 1 ? 'is' : 'are'} listed once.`;
}

/** --page, --per-page and --all, as every paged list command takes them. */
export const PAGING_OPTIONS = {
  page: int('--page <n>', 'page number to fetch'),
  perPage: int('--per-page <n>', 'records per page', { max: 1000 }),
  all: flag('--all', 'fetch every page'),
};

export function checkPaging(opts: { page?: number | undefined; all?: boolean | undefined }): void {
  if (opts.all && opts.page !== undefined) throw new UsageError('--all and --page cannot be used together');
}
