import { CliError } from '../errors.js';
import type { ApiClient } from './client.js';
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
  /** The member the items came from, when the answer was an object. */
  key: string | undefined;
  requestId: string | undefined;
}

/**
 * Reads a list answer: `{ <items>: [...], meta }` (the documented shape) or a bare array (the
 * referral list's shape is not published). With `key`, that member is preferred.
 */
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
    if (arrays.length > 1 && key === undefined) {
      throw new CliError(
        `the list answer has several arrays (${arrays.map(([k]) => k).join(', ')}); cannot tell which holds the records`,
      );
    }
  }
  throw new CliError(
    'the list answer has no array of records (expected { <items>: [...], meta } or an array)',
  );
}

function isMeta(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The page after `page`, from meta, or undefined on the last page. */
export function nextPageFrom(meta: PageMeta | undefined, page: number): number | undefined {
  if (!meta) return undefined;
  if (meta.next_page !== undefined) return typeof meta.next_page === 'number' ? meta.next_page : undefined;
  const current = typeof meta.current_page === 'number' ? meta.current_page : page;
  if (typeof meta.total_pages === 'number' && current < meta.total_pages) return current + 1;
  return undefined;
}

export interface PaginateOptions {
  path: string;
  query?: Query;
  key?: string;
  page?: number | undefined;
  perPage?: number | undefined;
  all?: boolean | undefined;
}

/** Per-page size asked for with --all when the user gave none (the API's default and maximum are not published). */
export const ALL_PER_PAGE = 100;

/**
 * Yields one page (or, with `all`, every page in order). Follows `meta.next_page`, else
 * `total_pages`. A bare array has no meta: with `all`, pages are requested until one comes back
 * empty (a short page may only mean the server caps per_page) or repeats the previous one (a
 * server that ignores `page`), which is not yielded again.
 */
export async function* paginate<T = Record<string, unknown>>(
  client: ApiClient,
  opts: PaginateOptions,
): AsyncGenerator<ListPage<T>> {
  const firstPage = opts.page ?? 1;
  let page = firstPage;
  const askedPerPage = opts.query?.per_page;
  const perPage =
    opts.perPage ??
    (typeof askedPerPage === 'string' || typeof askedPerPage === 'number'
      ? Number(askedPerPage)
      : undefined) ??
    (opts.all ? ALL_PER_PAGE : undefined);
  let previousFirst: string | undefined;
  for (;;) {
    const query: Query = { ...opts.query };
    if (opts.page !== undefined || opts.all || page > 1) query.page = page;
    if (perPage !== undefined) query.per_page = perPage;
    const res = await client.request({ path: opts.path, query });
    const list = extractList<T>(res.data, opts.key);
    const first = list.items.length > 0 ? JSON.stringify(list.items[0]) : undefined;
    if (!list.meta && page > firstPage && (first === undefined || first === previousFirst)) return;
    previousFirst = first;
    yield { ...list, requestId: res.requestId };
    if (!opts.all) return;
    const next = list.meta ? nextPageFrom(list.meta, page) : list.items.length > 0 ? page + 1 : undefined;
    if (next === undefined || next <= page) return;
    page = next;
  }
}
