import type { ApiClient } from '../api/client.js';
import type { ListEndpoint } from '../api/endpoints/list.js';
import { ALL_PER_PAGE, fetchPagesInOrder, type PageMeta, readPage } from '../api/pages.js';
import { readingAnswer } from '../api/shape.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { checkCost, remainingAfterFirst } from '../meter/cost.js';
import type { FieldChoice } from '../output/fields.js';
import { type OutputFormat, redirectHint, refuseTerminal } from '../output/format.js';
import { type Column, write } from '../output/write.js';
import { checkSheetRows } from '../output/xlsx.js';
import { num, whole } from '../util/plural.js';
import { tuneHeapForStreaming } from '../util/streaming-heap.js';
import { flag, int } from './options.js';
import { checkRecords } from './read-list.js';

interface ListCommandOptions<T> {
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

export async function listCommand<T>(ctx: Context, opts: ListCommandOptions<T>): Promise<number> {
  const format = ctx.format('table');
  // A file named for what is listed: "ICD-10 codes" -> icd-10-codes.xlsx.
  const file = `${opts.noun
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')}.xlsx`;
  refuseTerminal(format, ctx.io.stdoutIsTTY, redirectHint(file));
  const client = opts.cached ? ctx.referenceApi() : ctx.api();
  if (opts.all) {
    tuneHeapForStreaming();
    return listAll(ctx, opts, format, client);
  }
  let lastMeta: PageMeta | undefined;
  const check = checker(opts, format);
  async function* pages(): AsyncGenerator<readonly T[]> {
    const page = await readPage<T>(client, { ...opts.endpoint, page: opts.page, perPage: opts.perPage });
    lastMeta = page.meta;
    check(page.items, page.requestId, 0);
    yield page.items;
  }
  // An empty page past the last one is not "nothing matches": say which pages there are instead.
  const count = await write(pages(), {
    sink: ctx.sink(),
    format,
    sheet: sheetName(opts.noun),
    columns: opts.columns,
    fields: opts.fields,
    signal: ctx.signal,
    emptyHint: () => pastLastPage(opts, lastMeta) ?? emptyHint(opts, format, lastMeta),
  });
  const pastEnd = count === 0 ? pastLastPage(opts, lastMeta) : undefined;
  if (
    !pastEnd &&
    format === 'table' &&
    lastMeta &&
    typeof lastMeta.total_pages === 'number' &&
    lastMeta.total_pages > 1
  ) {
    // meta comes from the server: a hint shows numbers only, and is left out when they are not.
    const current = lastMeta.current_page === undefined ? (opts.page ?? 1) : whole(lastMeta.current_page);
    const total = whole(lastMeta.total_count);
    const all = total !== undefined ? ` (${num(total)} ${opts.noun})` : '';
    const nextPage = whole(lastMeta.next_page);
    const next = nextPage ? ` Next: --page ${nextPage}, or --all.` : '';
    const pages = whole(lastMeta.total_pages);
    if (current !== undefined && pages !== undefined)
      ctx.note(`Page ${num(current)} of ${num(pages)}${all}.${next}`);
  }
  return 0;
}

/** Scripts reading NDJSON take no output as "none": the hint only when the server counted none. */
function emptyHint<T>(opts: ListCommandOptions<T>, format: OutputFormat, meta: PageMeta | undefined) {
  return format === 'ndjson' && meta?.total_count !== 0 ? undefined : opts.emptyHint;
}

/** The shape checks of a page before the writer takes it (`checkRecords`), in the answer's name. */
function checker<T>(opts: ListCommandOptions<T>, format: OutputFormat) {
  return (items: readonly unknown[], requestId: string | undefined, offset: number) =>
    readingAnswer(requestId, () => checkRecords(items, opts.noun, format, offset, opts.check));
}

/** Pages fetched at once by --all unless --concurrency says otherwise (the export's default). */
const LIST_CONCURRENCY = 4;

// --all: pages 2..N are fetched `concurrency` at a time and written in the API's order.
async function listAll<T>(
  ctx: Context,
  opts: ListCommandOptions<T>,
  format: OutputFormat,
  client: ApiClient,
): Promise<number> {
  const { ProgressBar } = await import('../output/progress.js');
  const perPage = allPerPage(opts);
  const sink = ctx.sink();
  const progress = new ProgressBar(
    ctx.io.stderr,
    ctx.io.stderrIsTTY && !(streams(format) && ctx.io.stdoutIsTTY),
    `Listing ${opts.noun}`,
    ctx.io.columns ?? 80,
  );
  const onAbort = () => progress.done();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  let written = 0;
  let duplicates = 0;
  let lastMeta: PageMeta | undefined;
  const check = checker(opts, format);
  async function* pages(): AsyncGenerator<readonly T[]> {
    let received = 0;
    let count = 0;
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
        onNote: (text) => ctx.note(text),
      },
      ctx.signal,
    );
    for await (const page of walk) {
      count++;
      duplicates = page.duplicates;
      lastMeta = page.meta;
      // Before pages 2..N are asked for: the generator requests them only when asked for the next.
      if (count === 1) {
        if (format === 'xlsx') checkSheetRows(page.meta?.total_count);
        await costOfAll(ctx, opts, page, client, perPage);
      }
      check(page.items, page.requestId, received);
      received += page.items.length;
      progress.update(count, received, page.totalPages);
      yield page.items as T[];
    }
    progress.done();
  }
  try {
    await write(pages(), {
      sink,
      format,
      sheet: sheetName(opts.noun),
      columns: opts.columns,
      fields: opts.fields,
      signal: ctx.signal,
      onWritten: (n) => {
        written = n;
      },
      emptyHint: () => emptyHint(opts, format, lastMeta),
    });
  } catch (err) {
    progress.done();
    if (!ctx.signal.aborted && written > 0) ctx.note(stoppedNote(ctx, written, opts.noun));
    throw err;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
  if (duplicates > 0) ctx.note(duplicatesNote(duplicates));
  return 0;
}

// As export says it: "above" only when the records are on the terminal.
function stoppedNote(ctx: Context, written: number, noun: string): string {
  return `Listing stopped after ${num(written)} ${written === 1 ? 'record' : noun}: the output ${ctx.io.stdoutIsTTY ? 'above' : 'sent to standard output'} is incomplete.`;
}

const sheetName = (noun: string) => noun.charAt(0).toUpperCase() + noun.slice(1);

/** --per-page, else the per_page of the endpoint's query, else the one --all asks for. */
function allPerPage<T>(opts: ListCommandOptions<T>): number {
  const asked = opts.endpoint.query.per_page;
  return (
    opts.perPage ??
    (typeof asked === 'string' || typeof asked === 'number' ? Number(asked) : undefined) ??
    ALL_PER_PAGE
  );
}

/** Whether records reach standard output as they come (so a progress line there would mix in). */
function streams(format: OutputFormat): boolean {
  return format === 'json' || format === 'ndjson';
}

/** After page 1 of --all: what the remaining pages cost the sandbox allowance (meter/cost.ts). */
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

// "--page 99 is past the last page: ICD-10 codes have pages 1 to 2 (45 in all)." (numbers only, from meta)
function pastLastPage(
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
function duplicatesNote(n: number): string {
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
