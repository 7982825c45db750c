import { once } from 'node:events';
import type { ApiClient } from '../api/client.js';
import type { ListEndpoint } from '../api/endpoints/list.js';
import { ALL_PER_PAGE, fetchPagesInOrder, type PageMeta, PageWalk, paginate } from '../api/pages.js';
import { checkListItems, readingAnswer } from '../api/shape.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { utf8Of } from '../export/utf8.js';
import { checkCost, remainingAfterFirst } from '../meter/cost.js';
import { type FieldChoice, pick } from '../output/fields.js';
import { type Column, renderList } from '../output/render.js';
import { num, whole } from '../util/plural.js';
import { tuneHeapForStreaming } from '../util/streaming-heap.js';
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
  /** --all: pages fetched at once (default LIST_CONCURRENCY). */
  concurrency?: number | undefined;
}

/**
 * A paginated list: one page, or every page with --all (`listAll`). One page in NDJSON or JSON is
 * written as it comes; JSON keeps the same bytes as one pretty-printed array.
 */
export async function listCommand<T>(ctx: Context, opts: ListCommandOptions<T>): Promise<number> {
  const format = ctx.format('table');
  const client = opts.cached ? ctx.referenceApi() : ctx.api();
  if (opts.all) {
    tuneHeapForStreaming();
    return listAll(ctx, opts, format, client);
  }
  const walkOpts = { ...opts.endpoint, page: opts.page, perPage: opts.perPage, all: opts.all };
  const records: T[] = [];
  let lastMeta: PageMeta | undefined;
  const walk = new PageWalk(`the ${opts.noun}`, { requireIds: true });
  if (format === 'ndjson' || format === 'json') {
    const out = ctx.io.stdout;
    const chosen = opts.fields?.chosen;
    let count = 0;
    for await (const page of paginate<T>(client, walkOpts, walk)) {
      lastMeta = page.meta;
      const chunk = utf8Of(encodeRecords(page.items, format, chosen, count));
      count += page.items.length;
      if (chunk.length !== 0 && !out.write(chunk)) await once(out, 'drain', { signal: ctx.signal });
    }
    if (format === 'json') out.write(count === 0 ? '[]\n' : '\n]\n');
    if (walk.duplicates > 0) ctx.note(duplicatesNote(walk.duplicates));
    const pastEnd = count === 0 ? pastLastPage(opts, lastMeta) : undefined;
    if (pastEnd) ctx.note(pastEnd);
    else if (count === 0 && (format === 'json' || lastMeta?.total_count === 0)) ctx.note(opts.emptyHint);
    return 0;
  }
  for await (const page of paginate<T>(client, walkOpts, walk)) {
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
    const current = lastMeta.current_page === undefined ? (opts.page ?? 1) : whole(lastMeta.current_page);
    const count = whole(lastMeta.total_count);
    const total = count !== undefined ? ` (${num(count)} ${opts.noun})` : '';
    const nextPage = whole(lastMeta.next_page);
    const next = nextPage ? ` Next: --page ${nextPage}, or --all.` : '';
    const pages = whole(lastMeta.total_pages);
    if (current !== undefined && pages !== undefined)
      ctx.note(`Page ${num(current)} of ${num(pages)}${total}.${next}`);
  }
  return 0;
}

/**
 * Records as NDJSON lines, or as the members of one pretty-printed JSON array (`before` records
 * already written: the first one opens the array). `JSON.stringify([r], null, 2)` is "[\n  …\n]":
 * the record as it sits inside the whole array.
 */
function encodeRecords(
  items: unknown[],
  format: 'ndjson' | 'json',
  chosen: readonly string[] | undefined,
  before: number,
): string[] {
  const chunk: string[] = [];
  let count = before;
  for (const item of items) {
    const r = chosen ? pick(item, chosen) : item;
    // Separate pieces: a `${json}\n` would be a cons string, copied whole to be measured (utf8Of).
    if (format === 'ndjson') chunk.push(JSON.stringify(r), '\n');
    else chunk.push(count === 0 ? '[\n' : ',\n', JSON.stringify([r], null, 2).slice(2, -2));
    count++;
  }
  return chunk;
}

/** Pages fetched at once by --all unless --concurrency says otherwise (the export's default). */
export const LIST_CONCURRENCY = 4;

/**
 * Every page (--all), through the export's page pipeline (api/pages.ts `fetchPagesInOrder`): once
 * page 1 gives total_pages, pages 2..N are fetched `concurrency` at a time and written in the
 * API's order, under the one PageWalk policy (budget, duplicates, empty pages). The sandbox cost
 * check runs after page 1, before any other page is asked for. NDJSON and JSON are written page by
 * page; the next requests go out only as the reader takes what was written (at most `concurrency`
 * pages wait, as bytes), so memory stays flat for any number of records. A table or CSV needs
 * every record first (column widths; the CSV's documented columns and the tail of extra fields), so
 * those are collected. A progress line shows on stderr when it is a terminal (and the records are
 * not being written to that same terminal), cleared on every way out. A failure after records went
 * to a terminal says the output above is incomplete.
 */
async function listAll<T>(
  ctx: Context,
  opts: ListCommandOptions<T>,
  format: ReturnType<Context['format']>,
  client: ApiClient,
): Promise<number> {
  const { ProgressBar } = await import('../output/progress.js');
  const streaming = format === 'ndjson' || format === 'json';
  const out = ctx.io.stdout;
  const chosen = opts.fields?.chosen;
  const askedPerPage = opts.endpoint.query.per_page;
  const perPage =
    opts.perPage ??
    (typeof askedPerPage === 'string' || typeof askedPerPage === 'number'
      ? Number(askedPerPage)
      : undefined) ??
    ALL_PER_PAGE;
  const progress = new ProgressBar(
    ctx.io.stderr,
    ctx.io.stderrIsTTY && !(streaming && ctx.io.stdoutIsTTY),
    `Listing ${opts.noun}`,
    ctx.io.columns ?? 80,
  );
  const onAbort = () => progress.done();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const records: T[] = [];
  let written = 0;
  let received = 0;
  let pages = 0;
  let duplicates = 0;
  let lastMeta: PageMeta | undefined;
  try {
    const walk = fetchPagesInOrder(
      client,
      {
        path: opts.endpoint.path,
        key: opts.endpoint.key,
        query: opts.endpoint.query,
        perPage,
        concurrency: opts.concurrency ?? LIST_CONCURRENCY,
        what: `the ${opts.noun}`,
        listName: `the list of ${opts.noun}`,
        parsed: opts.cached,
      },
      ctx.signal,
    );
    for await (const page of walk) {
      pages++;
      duplicates = page.duplicates;
      lastMeta = page.meta;
      // Before pages 2..N are asked for: the generator requests them only when asked for the next.
      if (pages === 1) await costOfAll(ctx, opts, page, client, perPage);
      const items = page.items as T[];
      if (format === 'ndjson' || format === 'json') {
        // Bytes built from each record's text, never one page-sized string (export/utf8.ts).
        const chunk = utf8Of(encodeRecords(items, format, chosen, written));
        written += items.length;
        if (chunk.length !== 0 && !out.write(chunk)) await once(out, 'drain', { signal: ctx.signal });
      } else {
        const offset = records.length;
        readingAnswer(page.requestId, () => {
          checkListItems(items, opts.noun);
          if (opts.check && format === 'table')
            for (const [i, r] of items.entries()) opts.check(r, offset + i);
        });
        records.push(...items);
      }
      received += items.length;
      progress.update(pages, received, page.totalPages);
    }
    progress.done();
  } catch (err) {
    progress.done();
    // As export says it: "above" only when the records are on the terminal.
    if (!ctx.signal.aborted && written > 0)
      ctx.note(
        `Listing stopped after ${num(written)} ${written === 1 ? 'record' : opts.noun}: the output ${ctx.io.stdoutIsTTY ? 'above' : 'sent to standard output'} is incomplete.`,
      );
    throw err;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
  if (streaming) {
    if (format === 'json') out.write(written === 0 ? '[]\n' : '\n]\n');
    if (duplicates > 0) ctx.note(duplicatesNote(duplicates));
    if (written === 0 && (format === 'json' || lastMeta?.total_count === 0)) ctx.note(opts.emptyHint);
    return 0;
  }
  if (duplicates > 0) ctx.note(duplicatesNote(duplicates));
  await renderList(ctx.sink(), records, {
    format,
    columns: opts.columns,
    emptyHint: opts.emptyHint,
    ...(opts.fields ? { fields: opts.fields } : {}),
  });
  return 0;
}

/**
 * After page 1 of --all: what the remaining pages cost the sandbox allowance (meter/cost.ts). Pages
 * the reference-data cache will answer (ICD-10) send nothing, so they cost nothing.
 */
async function costOfAll<T>(
  ctx: Context,
  opts: ListCommandOptions<T>,
  first: { items: unknown[]; meta: PageMeta | undefined },
  client: ApiClient,
  perPage: number,
): Promise<true> {
  if (!opts.all) return true;
  let remaining = remainingAfterFirst(
    first.meta?.total_pages,
    first.meta?.total_count,
    first.items.length || opts.perPage,
  );
  const cache = opts.cached ? client.cache : undefined;
  if (cache && remaining !== undefined && remaining <= 10_000 && ctx.meter()) {
    let cached = 0;
    for (let page = 2; page <= remaining + 1; page++) {
      const url = client.url(opts.endpoint.path, { ...opts.endpoint.query, page, per_page: perPage });
      if (cache.lookup(opts.endpoint.path, url)) cached++;
    }
    remaining -= cached;
  }
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
  const pages = whole(meta.total_pages);
  if (pages === undefined || opts.page <= pages) return undefined;
  const count = whole(meta.total_count);
  const all = count !== undefined ? ` (${num(count)} in all)` : '';
  if (pages === 0) return `--page ${opts.page} is past the last page: there are no ${opts.noun}.`;
  const which = pages === 1 ? 'one page, --page 1' : `pages 1 to ${num(pages)}`;
  return `--page ${opts.page} is past the last page: the ${opts.noun} have ${which}${all}.`;
}

/** Records a page walk dropped because an earlier page had them (same id). */
export function duplicatesNote(n: number): string {
  return `warning: ${num(n)} record${n === 1 ? '' : 's'} came again on a later page (same id) and ${n === 1 ? 'is' : 'are'} listed once.`;
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
