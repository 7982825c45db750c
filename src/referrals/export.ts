import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { type ApiClient, type Body, MAX_JSON_DEPTH, nestedDeeperThan } from '../api/client.js';
import { extractList, type ListPage, nextPageFrom, type PageMeta, PageWalk } from '../api/paginate.js';
import { readingAnswer } from '../api/shape.js';
import type { Query } from '../api/url.js';
import { CliError, UnreadableAnswerError } from '../errors.js';
import { csvRow } from '../output/csv.js';
import type { ProgressBar } from '../output/progress.js';
import { COLUMNS, hasVisitIn, type RowKind, rowsOf } from './rows.js';

export type ExportFormat = 'csv' | 'ndjson' | 'json';

export interface ExportOptions {
  format: ExportFormat;
  rows: RowKind;
  query: Query;
  perPage: number;
  concurrency: number;
  visitStatuses: ReadonlySet<string> | undefined;
  formulaGuard: boolean;
}

export interface ExportSummary {
  referrals: number;
  rows: number;
  pages: number;
  requests: number;
  seconds: number;
  /** The API's meta.total_count on page 1, when it sent one. */
  expected: number | undefined;
  /** Referrals that came again on a later page (same id): written once, counted here. */
  duplicates: number;
}

const REFERRALS_PATH = '/referrals';

/**
 * Every referral of every page, written as it arrives, in the API's order. Once page 1 gives
 * total_pages, pages 2..N are fetched `concurrency` at a time; a page is held only until the pages
 * before it are written, so memory stays flat however many referrals there are. Any page that
 * still fails after the client's retries stops the export (and the other requests) with its error.
 */
export async function exportReferrals(
  client: ApiClient,
  out: Writable,
  opts: ExportOptions,
  progress: ProgressBar,
  signal: AbortSignal,
): Promise<ExportSummary> {
  const started = Date.now();
  const requestsBefore = client.requestCount;
  const summary: ExportSummary = {
    referrals: 0,
    rows: 0,
    pages: 0,
    requests: 0,
    seconds: 0,
    expected: undefined,
    duplicates: 0,
  };
  const write = async (text: string) => {
    if (text === '' || out.write(text)) return;
    await once(out, 'drain', { signal });
  };

  let first = true;
  if (opts.format === 'csv') await write(csvRow(COLUMNS[opts.rows], opts.formulaGuard));
  if (opts.format === 'json') await write('[');

  for await (const page of fetchPagesInOrder(client, opts, signal)) {
    summary.pages++;
    summary.duplicates = page.duplicates;
    if (summary.pages === 1) {
      // The server's count goes into a note: a number, or nothing (never its text).
      const total: unknown = page.meta?.total_count;
      summary.expected = typeof total === 'number' && Number.isFinite(total) ? total : undefined;
    }
    const chunk = readingAnswer(page.requestId, () => encodePage(page.items));
    await write(chunk);
    progress.update(summary.pages, summary.referrals, page.totalPages);
  }
  if (opts.format === 'json') await write(first ? ']\n' : '\n]\n');
  summary.requests = client.requestCount - requestsBefore;
  summary.seconds = (Date.now() - started) / 1000;
  return summary;

  function encodePage(items: unknown[]): string {
    let chunk = '';
    for (const referral of items) {
      summary.referrals++;
      if (opts.rows === 'referral' && opts.format !== 'csv') {
        if (opts.visitStatuses && !hasVisitIn(referral, opts.visitStatuses)) continue;
        summary.rows++;
        chunk += encodeJson(referral, opts.format, first);
        first = false;
        continue;
      }
      for (const row of rowsOf(referral, opts.rows, opts.visitStatuses)) {
        summary.rows++;
        if (opts.format === 'csv') chunk += csvRow(Object.values(row), opts.formulaGuard);
        else {
          chunk += encodeJson(row, opts.format, first);
          first = false;
        }
      }
    }
    return chunk;
  }
}

function encodeJson(record: unknown, format: 'ndjson' | 'json', first: boolean): string {
  const text = JSON.stringify(record);
  return format === 'ndjson' ? `${text}\n` : `${first ? '\n' : ',\n'}${text}`;
}

interface RawPage {
  page: number;
  body: Body;
  requestId: string | undefined;
}

interface OrderedPage extends ListPage<unknown> {
  totalPages: number | undefined;
  /** Referrals dropped so far because an earlier page had them (PageWalk). */
  duplicates: number;
}

/**
 * Pages in order; pages 2..N concurrently when total_pages is known, else one after another. The
 * walk follows the PageWalk policy (budget from the totals, empty or repeated pages stop it with an
 * error); referrals already seen on an earlier page are dropped and counted.
 */
export async function* fetchPagesInOrder(
  client: ApiClient,
  opts: Pick<ExportOptions, 'query' | 'perPage' | 'concurrency'>,
  signal: AbortSignal,
): AsyncGenerator<OrderedPage> {
  // One controller for this export: a failed page stops the others at once.
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const query = (page: number) => ({ ...opts.query, page, per_page: opts.perPage });
  // A page waiting for its turn is held as bytes (a third of the size of the parsed records, and
  // outside the JS heap), and parsed when it is written: memory stays flat with any concurrency.
  const fetchRaw = async (page: number): Promise<RawPage> => {
    const res = await client.request({
      path: REFERRALS_PATH,
      query: query(page),
      signal: stop.signal,
      raw: true,
    });
    return { page, body: res.body, requestId: res.requestId };
  };
  const parsePage = async (p: RawPage): Promise<ListPage<unknown>> => {
    let data: unknown;
    try {
      data = JSON.parse(p.body.text());
    } catch {
      // Cut short or garbled: ask again through the client, which retries malformed answers.
      data = (await client.request({ path: REFERRALS_PATH, query: query(p.page), signal: stop.signal })).data;
    }
    if (nestedDeeperThan(data, MAX_JSON_DEPTH))
      throw new UnreadableAnswerError(
        `the referral list, page ${p.page}: nested more than ${MAX_JSON_DEPTH} levels deep`,
        p.requestId,
      );
    return { ...readingAnswer(p.requestId, () => extractList(data, 'referrals')), requestId: p.requestId };
  };
  const walk = new PageWalk('the referrals');
  const fetchPage = async (page: number) => {
    walk.allow();
    return parsePage(await fetchRaw(page));
  };
  const inflight = new Map<number, Promise<RawPage>>();
  try {
    const first = await fetchPage(1);
    const total = typeof first.meta?.total_pages === 'number' ? first.meta.total_pages : undefined;
    first.items = walk.accept(1, first.items, first.meta) ?? [];
    yield { ...first, totalPages: total, duplicates: walk.duplicates };
    if (total !== undefined) {
      let next = 2;
      const launch = () => {
        while (next <= total && inflight.size < opts.concurrency) {
          walk.allow();
          const p = fetchRaw(next);
          p.catch(() => {}); // handled when its turn comes; avoids an unhandled rejection meanwhile
          inflight.set(next, p);
          next++;
        }
      };
      launch();
      for (let n = 2; n <= total; n++) {
        const pending = inflight.get(n);
        if (!pending) throw new CliError(`internal: page ${n} was never requested`);
        const raw = await pending;
        inflight.delete(n);
        const page = await parsePage(raw);
        // Checked before the next request goes out: a bad page costs no more than those in flight.
        const items = walk.accept(n, page.items, page.meta);
        if (items === undefined) return;
        launch();
        yield { ...page, items, totalPages: total, duplicates: walk.duplicates };
      }
      return;
    }
    // No total_pages: follow next_page; for a bare array, ask until a page comes back empty (a short
    // page may only mean the server caps per_page) or repeats the one before (page ignored).
    let current = 1;
    let prev: ListPage<unknown> = first;
    for (;;) {
      let next: number | undefined;
      if (prev.meta) next = nextPageFrom(prev.meta as PageMeta, current);
      else next = prev.items.length > 0 ? current + 1 : undefined;
      if (next === undefined || next <= current) return;
      const page = await fetchPage(next);
      const items = walk.accept(next, page.items, page.meta);
      if (items === undefined) return;
      current = next;
      prev = page;
      yield { ...page, items, totalPages: undefined, duplicates: walk.duplicates };
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (inflight.size > 0) stop.abort(new CliError('export stopped'));
  }
}
