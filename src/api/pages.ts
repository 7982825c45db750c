import { CliError, UnreadableAnswerError } from '../errors.js';
import { num } from '../util/plural.js';
import {
  type ApiClient,
  type ApiRequest,
  type ApiResponse,
  MAX_JSON_DEPTH,
  nestedDeeperThan,
} from './client.js';
import { IdSet } from './idset.js';
import { kindOf, readingAnswer } from './shape.js';
import type { Query } from './url.js';

export interface PageMeta {
  current_page?: number;
  next_page?: number | null;
  prev_page?: number | null;
  total_pages?: number;
  total_count?: number;
}

export interface ListPage<T> {
  items: T[];
  meta: PageMeta | undefined;
  key: string | undefined;
  requestId: string | undefined;
}

/** Reads a list answer: `{ <items>: [...], meta }` or a bare array; with `key`, that member first. */
export function extractList<T = Record<string, unknown>>(
  data: unknown,
  key?: string,
): Omit<ListPage<T>, 'requestId'> {
  if (Array.isArray(data)) return { items: data as T[], meta: undefined, key: undefined };
  if (typeof data === 'object' && data !== null) {
    const obj = data as Record<string, unknown>;
    const meta = isMeta(obj.meta) ? (obj.meta as PageMeta) : undefined;
    if (key && Array.isArray(obj[key])) return { items: obj[key] as T[], meta, key };
    const arrays = Object.entries(obj).filter(([k, v]) => k !== 'meta' && Array.isArray(v));
    if (arrays.length === 1) {
      const [k, v] = arrays[0] as [string, unknown[]];
      return { items: v as T[], meta, key: k };
    }
    if (arrays.length > 1)
      throw new UnreadableAnswerError(
        `the list: ${arrays.length} members are lists${key ? `, none of them "${key}"` : ''}; cannot tell which holds the records`,
      );
    if (key && key in obj)
      throw new UnreadableAnswerError(`the list: ${key} is ${kindOf(obj[key])}, not a list`);
    throw new UnreadableAnswerError(
      `the list is an object with no list of records in it${key ? ` (expected ${key}: [...])` : ''}`,
    );
  }
  throw new UnreadableAnswerError(`the list is ${kindOf(data)}, not a list or an object`);
}

function isMeta(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function nextPageFrom(meta: PageMeta | undefined, page: number): number | undefined {
  if (!meta) return undefined;
  if (meta.next_page !== undefined) return typeof meta.next_page === 'number' ? meta.next_page : undefined;
  const current = typeof meta.current_page === 'number' ? meta.current_page : page;
  if (typeof meta.total_pages === 'number' && current < meta.total_pages) return current + 1;
  return undefined;
}

/** No page walk ever requests more pages than this (1,000,000 records at 100 a page). */
const MAX_PAGES = 10_000;
/** Without total_pages / total_count to go by, a walk stops here (100,000 records at 100 a page). */
export const MAX_PAGES_WITHOUT_TOTAL = 1_000;

export interface WrittenIds {
  ids: IdSet;
  numeric: Set<number>;
}

/**
 * The policy of every page walk, so a server that never stops paging cannot burn the request
 * allowance. A walk stops with an error when a page is empty while more were promised, when a page
 * repeats an earlier one (a bare array repeating the page before is its end instead), or when it
 * would pass its budget (page 1's totals plus 10%, at least 3, at most MAX_PAGES). Records seen on
 * an earlier page (same `id`) are dropped and counted in `duplicates`.
 */
export class PageWalk {
  pages = 0;
  requested = 0;
  duplicates = 0;
  budget = MAX_PAGES_WITHOUT_TOTAL;
  /** What page 1 promised: total_pages, else total_count records. */
  private promised: { pages: number } | { records: number } | undefined;
  private received = 0;
  private readonly fingerprints = new Map<string, number>();
  private ids = new IdSet();
  private numericIds = new Set<number>();
  private lastFingerprint: string | undefined;
  // The last page's ids as they came: made a set only when a page repeats every one of them.
  private lastPage: { page: number; ids: ReadonlyArray<string | number | undefined> } | undefined;

  /** `requireIds`: without ids, a page repeating earlier records with a field changed looks new. */
  constructor(
    private readonly what = 'the list',
    private readonly opts: { requireIds?: boolean; onNote?: ((text: string) => void) | undefined } = {},
  ) {}

  /** Page 1's total_pages, unless its own next_page points past it: then the walk follows next_page. */
  totalPages(page: number, meta: PageMeta | undefined): number | undefined {
    const total = meta?.total_pages;
    if (typeof total !== 'number') return undefined;
    const next = meta?.next_page;
    if (typeof next === 'number' && next > page && next > total) return undefined;
    return total;
  }

  private contradicted(page: number, meta: PageMeta | undefined): void {
    this.opts.onNote?.(
      `Note: page ${num(page)} of ${this.what} says total_pages ${num(Number(meta?.total_pages))} but next_page ${num(Number(meta?.next_page))}; following next_page to the end.`,
    );
  }

  /** Continues a resumed export: `received` records and the `written` ids came before. */
  continueAfter(received: number, written: WrittenIds): void {
    this.received = received;
    this.ids = written.ids;
    this.numericIds = written.numeric;
  }

  allow(): void {
    if (this.requested >= this.budget)
      throw new CliError(
        `stopped paging ${this.what} after ${num(this.requested)} pages: more pages than the server's own totals allow (budget ${num(this.budget)} pages)`,
        1,
        'Nothing more was requested. Narrow the query (--param / filters), or report the server answer with --verbose.',
      );
    this.requested++;
  }

  /** A page's records not seen before, or undefined at the end of a bare-array list. */
  accept<T>(page: number, items: T[], meta: PageMeta | undefined): T[] | undefined {
    if (this.pages === 0) {
      const trusted = typeof meta?.total_pages !== 'number' || this.totalPages(page, meta) !== undefined;
      this.budget = trusted ? budgetFrom(meta, items.length) : MAX_PAGES_WITHOUT_TOTAL;
      this.promised = trusted ? promisedFrom(meta) : undefined;
      if (!trusted) this.contradicted(page, meta);
    }
    if (items.length === 0) {
      const next = meta ? nextPageFrom(meta, page) : undefined;
      const p = this.promised;
      const owed =
        p === undefined
          ? undefined
          : 'pages' in p
            ? page < p.pages && `${num(p.pages)} pages`
            : this.received < p.records && `${num(p.records)} records, ${num(this.received)} received`;
      if ((next !== undefined && next > page) || owed)
        throw new CliError(
          `stopped paging ${this.what}: page ${page} is empty but the server ${next !== undefined && next > page ? 'says' : `said on page 1 (${owed})`} there are more`,
          1,
          'Nothing more was requested. Report the server answer with --verbose.',
        );
      if (!meta && this.pages > 0) return undefined;
      this.pages++;
      this.lastFingerprint = undefined;
      this.lastPage = { page, ids: [] };
      return items;
    }
    if (this.opts.requireIds) {
      const i = items.findIndex((r) => idOf(r) === undefined);
      if (i >= 0) {
        const r = items[i] as unknown;
        const id = typeof r === 'object' && r !== null ? (r as { id?: unknown }).id : undefined;
        throw new UnreadableAnswerError(
          `${this.what}, page ${page}, record ${i + 1}: ${typeof r !== 'object' || r === null ? `the record is ${kindOf(r)}` : id === undefined ? 'it has no id' : `its id is ${kindOf(id)}, not text`}`,
        );
      }
    }
    const fp = fingerprint(items);
    const earlier = this.fingerprints.get(fp);
    if (earlier !== undefined) {
      if (!meta && fp === this.lastFingerprint) return undefined;
      throw this.repeats(page, `page ${earlier}`);
    }
    const keys = items.map(idOf);
    if (keys.every((k) => k !== undefined && this.has(k))) {
      const prev = this.lastPage;
      const previous = prev && new Set(prev.ids);
      const onlyPrevious = previous !== undefined && keys.every((k) => previous.has(k));
      if (!meta && onlyPrevious) return undefined;
      throw this.repeats(
        page,
        onlyPrevious ? `page ${prev!.page}` : 'earlier pages (none of its records is new)',
      );
    }
    this.fingerprints.set(fp, page);
    this.lastFingerprint = fp;
    this.lastPage = { page, ids: keys };
    this.pages++;
    this.received += items.length;
    if (keys.every((k) => k === undefined)) return items;
    return items.filter((_, i) => {
      const k = keys[i];
      if (k === undefined) return true;
      if (this.add(k)) return true;
      this.duplicates++;
      return false;
    });
  }

  private repeats(page: number, earlier: string): CliError {
    return new CliError(
      `stopped paging ${this.what}: page ${page} repeats ${earlier} (the server does not move on)`,
      1,
      'Nothing more was requested. Report the server answer with --verbose.',
    );
  }

  private has(k: string | number): boolean {
    return typeof k === 'number' ? this.numericIds.has(k) : this.ids.has(k);
  }

  private add(k: string | number): boolean {
    if (typeof k === 'string') return this.ids.add(k);
    if (this.numericIds.has(k)) return false;
    this.numericIds.add(k);
    return true;
  }
}

function promisedFrom(meta: PageMeta | undefined): { pages: number } | { records: number } | undefined {
  if (!meta) return undefined;
  if (typeof meta.total_pages === 'number' && meta.total_pages >= 0) return { pages: meta.total_pages };
  if (typeof meta.total_count === 'number' && meta.total_count >= 0) return { records: meta.total_count };
  return undefined;
}

function budgetFrom(meta: PageMeta | undefined, firstPageSize: number): number {
  let known: number | undefined;
  if (meta && typeof meta.total_pages === 'number' && meta.total_pages >= 0) known = meta.total_pages;
  else if (meta && typeof meta.total_count === 'number' && meta.total_count >= 0)
    known = Math.ceil(meta.total_count / Math.max(1, firstPageSize));
  if (known === undefined || !Number.isFinite(known)) return MAX_PAGES_WITHOUT_TOTAL;
  return Math.min(MAX_PAGES, Math.max(1, known) + Math.max(3, Math.ceil(known / 10)));
}

/**
 * A page's size and its first and last records, hashed (two FNV-1a variants) so a walk keeps a few
 * bytes a page, not the text. A collision stops the walk with an error, never loses a record. The
 * text's UTF-8 bytes are taken four at a time: a page of large records costs a quarter of the steps.
 */
function fingerprint(items: unknown[]): string {
  const text = `${items.length}\u0000${JSON.stringify(items[0])}\u0000${JSON.stringify(items[items.length - 1])}`;
  const encoded = Buffer.from(text, 'utf8');
  // An Int32Array view needs an offset a multiple of 4 (a small Buffer may sit anywhere in the pool).
  const bytes = encoded.byteOffset % 4 === 0 ? encoded : Buffer.from(encoded);
  const n = bytes.length >>> 2;
  const words = new Int32Array(bytes.buffer, bytes.byteOffset, n);
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  const step = (c: number) => {
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  };
  for (let i = 0; i < n; i++) step(words[i]!);
  for (let i = n * 4; i < bytes.length; i++) step(bytes[i]!);
  return `${items.length}:${(a >>> 0).toString(36)}:${(b >>> 0).toString(36)}`;
}

function idOf(record: unknown): string | number | undefined {
  if (typeof record !== 'object' || record === null) return undefined;
  const id = (record as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** The page after `page`: from meta, or for a bare array the next number while pages have records. */
function nextPageOf(
  list: { items: unknown[]; meta: PageMeta | undefined },
  page: number,
): number | undefined {
  const next = list.meta ? nextPageFrom(list.meta, page) : list.items.length > 0 ? page + 1 : undefined;
  return next === undefined || next <= page ? undefined : next;
}

/** Whether a walk asks for a page after this one (the `page`-th): within its total, or as it says. */
export function hasNextPage(
  list: { items: unknown[]; meta: PageMeta | undefined; totalPages?: number | undefined },
  page: number,
): boolean {
  return (list.totalPages !== undefined && page < list.totalPages) || nextPageOf(list, page) !== undefined;
}

/** Pages after `page`, one after another, through the walk's policy. */
async function* followPages<P extends ListPage<unknown>>(
  page: number,
  prev: P,
  fetch: (page: number) => Promise<P>,
  walk: PageWalk,
): AsyncGenerator<P> {
  for (let next = nextPageOf(prev, page); next !== undefined; next = nextPageOf(prev, page)) {
    walk.allow();
    const fetched = await fetch(next);
    const items = readingAnswer(fetched.requestId, () => walk.accept(next, fetched.items, fetched.meta));
    if (items === undefined) return;
    page = next;
    prev = fetched;
    yield { ...fetched, items };
  }
}

/** Per-page size asked for with --all when the user gave none (the API publishes no maximum). */
export const ALL_PER_PAGE = 100;

interface PageRequest {
  path: string;
  query?: Query;
  key?: string;
  page?: number | undefined;
  perPage?: number | undefined;
}

export async function readPage<T = Record<string, unknown>>(
  client: ApiClient,
  opts: PageRequest,
): Promise<ListPage<T>> {
  const query: Query = { ...opts.query };
  if (opts.page !== undefined) query.page = opts.page;
  if (opts.perPage !== undefined) query.per_page = opts.perPage;
  const res = await client.request({ path: opts.path, query });
  return {
    ...readingAnswer(res.requestId, () => extractList<T>(res.data, opts.key)),
    requestId: res.requestId,
  };
}

interface OrderedWalkOptions {
  path: string;
  key?: string | undefined;
  requireIds?: boolean | undefined;
  query: Query;
  perPage: number;
  concurrency: number;
  what: string;
  listName: string;
  /** Parsed answers instead of bytes held until their turn: the reference cache keeps only those. */
  parsed?: boolean | undefined;
  onNote?: ((text: string) => void) | undefined;
  /** Extra request headers, sent with every page (`imaging api -H`). */
  headers?: Record<string, string> | undefined;
  /** The first page's answer, already fetched by the caller with this walk's own request. */
  firstAnswer?: ApiResponse | undefined;
  /** The first page, already read and parsed (another walk's page 1 that turned out to be this one's). */
  firstPage?: ListPage<unknown> | undefined;
  /** A resumed export: `check` sees the first page's records before the walk does. */
  start?: {
    page: number;
    received: number;
    written: WrittenIds;
    check: (items: unknown[], meta: PageMeta | undefined, requestId: string | undefined) => void;
  };
}

export interface OrderedPage extends ListPage<unknown> {
  totalPages: number | undefined;
  duplicates: number;
}

function pageReader(client: ApiClient, opts: OrderedWalkOptions, signal: AbortSignal) {
  const request = (page: number): ApiRequest => ({
    path: opts.path,
    query: { ...opts.query, page, per_page: opts.perPage },
    ...(opts.headers && { headers: opts.headers }),
    signal,
    raw: !opts.parsed,
  });
  // A page waiting for its turn is held as bytes (smaller than parsed records, and outside the JS
  // heap), and parsed when its turn comes: memory stays flat with any concurrency.
  const raw = (page: number) => client.request(request(page));
  const parse = async (page: number, res: ApiResponse): Promise<ListPage<unknown>> => {
    let data: unknown = res.data;
    if (!opts.parsed)
      try {
        data = JSON.parse(res.body.text());
        res.body.release();
      } catch {
        // Cut short or garbled: the same request goes on under the policy, counting the sends it took.
        res = await client.retryUnreadable(request(page), res);
        data = res.data;
      }
    if (nestedDeeperThan(data, MAX_JSON_DEPTH))
      throw new UnreadableAnswerError(
        `${opts.listName}, page ${page}: nested more than ${MAX_JSON_DEPTH} levels deep`,
        res.requestId,
      );
    return { ...readingAnswer(res.requestId, () => extractList(data, opts.key)), requestId: res.requestId };
  };
  return { raw, parse, fetch: async (page: number) => parse(page, await raw(page)) };
}

type PageReader = ReturnType<typeof pageReader>;

/** Pages start+1..total, `concurrency` in flight, in order; undefined when a bare array ended the walk. */
async function* countedPages(
  reader: PageReader,
  walk: PageWalk,
  inflight: Map<number, Promise<ApiResponse>>,
  range: { start: number; total: number; concurrency: number },
  first: ListPage<unknown>,
): AsyncGenerator<OrderedPage, ListPage<unknown> | undefined> {
  const { start, total, concurrency } = range;
  let next = start + 1;
  const launch = () => {
    while (next <= total && inflight.size < concurrency) {
      walk.allow();
      const p = reader.raw(next);
      p.catch(() => {}); // handled when its turn comes; avoids an unhandled rejection meanwhile
      inflight.set(next, p);
      next++;
    }
  };
  launch();
  let last = first;
  for (let n = start + 1; n <= total; n++) {
    const pending = inflight.get(n);
    if (!pending) throw new CliError(`internal: page ${n} was never requested`);
    const raw = await pending;
    inflight.delete(n);
    const page = await reader.parse(n, raw);
    // Checked before the next request goes out: a bad page costs no more than those in flight.
    const items = readingAnswer(page.requestId, () => walk.accept(n, page.items, page.meta));
    if (items === undefined) return undefined;
    launch();
    last = page;
    yield { ...page, items, totalPages: total, duplicates: walk.duplicates };
  }
  return last;
}

/** Every page in order, pages 2..N concurrently when page 1 gives total_pages; a failed page stops the rest. */
export async function* fetchPagesInOrder(
  client: ApiClient,
  opts: OrderedWalkOptions,
  signal: AbortSignal,
): AsyncGenerator<OrderedPage> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const reader = pageReader(client, opts, stop.signal);
  const walk = new PageWalk(opts.what, { requireIds: opts.requireIds ?? true, onNote: opts.onNote });
  const inflight = new Map<number, Promise<ApiResponse>>();
  try {
    const start = opts.start?.page ?? 1;
    if (opts.start) walk.continueAfter(opts.start.received, opts.start.written);
    walk.allow();
    const first = opts.firstPage
      ? { ...opts.firstPage, items: [...opts.firstPage.items] }
      : opts.firstAnswer
        ? await reader.parse(start, opts.firstAnswer)
        : await reader.fetch(start);
    opts.start?.check(first.items, first.meta, first.requestId);
    const total = walk.totalPages(start, first.meta);
    first.items = readingAnswer(first.requestId, () => walk.accept(start, first.items, first.meta)) ?? [];
    yield { ...first, totalPages: total, duplicates: walk.duplicates };
    let last: ListPage<unknown> = first;
    let end = start;
    if (total !== undefined) {
      const counted = yield* countedPages(
        reader,
        walk,
        inflight,
        { start, total, concurrency: opts.concurrency },
        first,
      );
      if (counted === undefined) return;
      // Never complete while the server says there is more: its last counted page names a next one.
      last = counted;
      end = Math.max(start, total);
      const more = nextPageOf(last, end);
      if (more === undefined) return;
      opts.onNote?.(
        `Note: page ${num(end)} of ${opts.what} is the last of total_pages ${num(total)} but says next_page ${num(more)}; following next_page to the end.`,
      );
    }
    for await (const page of followPages(end, last, reader.fetch, walk))
      yield { ...page, totalPages: undefined, duplicates: walk.duplicates };
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (inflight.size > 0) stop.abort(new CliError('export stopped'));
  }
}
