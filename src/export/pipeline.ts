import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { ApiClient } from '../api/client.js';
import { REFERRALS_PATH } from '../api/endpoints/referrals.js';
import { fetchPagesInOrder } from '../api/pages.js';
import { readingAnswer } from '../api/shape.js';
import type { Query } from '../api/url.js';
import { BOM, csvRow } from '../output/csv.js';
import { pick } from '../output/fields.js';
import type { ProgressBar } from '../output/progress.js';
import type { PageMark, ResumePoint } from './checkpoint.js';
import { COLUMNS, csvValue, hasVisitIn, type RowKind, rowsOf } from './rows.js';
import { utf8Of } from './utf8.js';

export type ExportFormat = 'csv' | 'ndjson' | 'json';

export interface ExportOptions {
  format: ExportFormat;
  rows: RowKind;
  query: Query;
  perPage: number;
  concurrency: number;
  visitStatuses: ReadonlySet<string> | undefined;
  formulaGuard: boolean;
  /** Told page 1's totals before anything is written or more pages are asked for (the cost check). */
  afterFirstPage?:
    | ((totalPages: number | undefined, totalCount: number | undefined, items: number) => Promise<void>)
    | undefined;
  /** CSV: a UTF-8 byte-order mark first (--bom). */
  bom?: boolean;
  /** --fields: only these columns (flat rows) or fields (referrals as sent), in this order. */
  fields?: readonly string[] | undefined;
  /** Continue a checkpoint: its bytes stand in for the header, then pages from `resume.page` (checkpoint.ts). */
  resume?: ResumePoint | undefined;
  /** After each complete page is handed to the output: where it ends (checkpoint.ts). */
  onPage?: ((mark: PageMark) => void) | undefined;
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
  let bytes = 0;
  const write = async (text: string | Buffer) => {
    bytes += typeof text === 'string' ? Buffer.byteLength(text) : text.length;
    if (text.length === 0 || out.write(text)) return;
    await once(out, 'drain', { signal });
  };

  let first = true;
  const columns = opts.fields ?? COLUMNS[opts.rows];
  const resume = opts.resume;
  if (resume) {
    for await (const chunk of resume.prefix()) await write(chunk);
    Object.assign(summary, resume.summary);
    first = !resume.wroteRecord;
  } else {
    if (opts.format === 'csv') await write(`${opts.bom ? BOM : ''}${csvRow(columns, opts.formulaGuard)}`);
    if (opts.format === 'json') await write('[');
  }
  const duplicatesBefore = summary.duplicates;
  let lastPage = resume ? resume.page - 1 : 0;
  const mark = (ids: string[], totalPages: number | undefined) =>
    opts.onPage?.({
      page: lastPage,
      bytes,
      summary: { ...summary },
      wroteRecord: !first,
      lastIds: ids,
      totalPages,
    });
  if (resume) mark(resume.lastIds, undefined);

  const pages = fetchPagesInOrder(
    client,
    {
      ...opts,
      path: REFERRALS_PATH,
      key: 'referrals',
      what: 'the referrals',
      listName: 'the referral list',
      ...(resume ? { start: resume.start } : {}),
    },
    signal,
  );
  for await (const page of pages) {
    summary.pages++;
    summary.duplicates = duplicatesBefore + page.duplicates;
    if (summary.pages === 1) {
      // The server's count goes into a note: a number, or nothing (never its text).
      const total: unknown = page.meta?.total_count;
      summary.expected = typeof total === 'number' && Number.isFinite(total) ? total : undefined;
      await opts.afterFirstPage?.(page.totalPages, summary.expected, page.items.length);
    } else if (resume && lastPage === resume.page - 1) {
      // A resumed export's first page: the cost check counts only the pages still to fetch.
      const skip = resume.page - 1;
      const count: unknown = page.meta?.total_count;
      await opts.afterFirstPage?.(
        page.totalPages === undefined ? undefined : page.totalPages - skip,
        typeof count === 'number' ? Math.max(0, count - skip * opts.perPage) : undefined,
        page.items.length,
      );
    }
    const chunk = utf8Of(readingAnswer(page.requestId, () => encodePage(page.items)));
    await write(chunk);
    lastPage++;
    if (opts.onPage) mark(idsOf(page.items), page.totalPages);
    progress.update(summary.pages, summary.referrals, page.totalPages);
  }
  if (opts.format === 'json') await write(first ? ']\n' : '\n]\n');
  summary.requests = client.requestCount - requestsBefore;
  summary.seconds = (Date.now() - started) / 1000;
  return summary;

  function encodePage(items: unknown[]): string[] {
    const chunk: string[] = [];
    for (const referral of items) {
      summary.referrals++;
      if (opts.rows === 'referral' && opts.format !== 'csv') {
        if (opts.visitStatuses && !hasVisitIn(referral, opts.visitStatuses)) continue;
        summary.rows++;
        encodeJson(chunk, opts.fields ? pick(referral, opts.fields) : referral, opts.format, first);
        first = false;
        continue;
      }
      for (const row of rowsOf(referral, opts.rows, opts.visitStatuses)) {
        summary.rows++;
        if (opts.format === 'csv')
          chunk.push(
            csvRow(
              columns.map((c) => csvValue(row[c])),
              opts.formulaGuard,
            ),
          );
        else {
          encodeJson(chunk, opts.fields ? pick(row, opts.fields) : row, opts.format, first);
          first = false;
        }
      }
    }
    return chunk;
  }
}

/** The last ids of a page, as a resumed export checks them at the seam (checkpoint.ts). */
function idsOf(items: unknown[]): string[] {
  const ids: string[] = [];
  for (const r of items.slice(-100)) {
    const id = (r as { id?: unknown } | null)?.id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(String(id));
  }
  return ids;
}

/** A record's line or array member, as separate pieces (joined they would be a cons string: utf8.ts). */
function encodeJson(chunk: string[], record: unknown, format: 'ndjson' | 'json', first: boolean): void {
  const text = JSON.stringify(record);
  if (format === 'ndjson') chunk.push(text, '\n');
  else chunk.push(first ? '\n' : ',\n', text);
}
