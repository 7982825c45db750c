import type { Writable } from 'node:stream';
import type { ApiClient } from '../api/client.js';
import { REFERRALS_PATH } from '../api/endpoints/referrals.js';
import { fetchPagesInOrder, type OrderedPage } from '../api/pages.js';
import { readingAnswer } from '../api/shape.js';
import type { Query } from '../api/url.js';
import { pick } from '../output/fields.js';
import type { ProgressBar } from '../output/progress.js';
import { encoder, type StreamFormat, send, terminalSafe, utf8Of } from '../output/write.js';
import type { PageMark, ResumePoint } from './checkpoint.js';
import { COLUMNS, csvValue, hasVisitIn, type Row, type RowKind, rowsOf } from './rows.js';

export type ExportFormat = StreamFormat | 'xlsx';

interface ExportOptions {
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
  onNote?: ((text: string) => void) | undefined;
  bom?: boolean;
  fields?: readonly string[] | undefined;
  /** Continue a checkpoint: its bytes stand in for the header, then pages from `resume.page`. */
  resume?: ResumePoint | undefined;
  onPage?: ((mark: PageMark) => void) | undefined;
  /** The output is a terminal: what it would act on is escaped, as every writer's data is there. */
  terminal?: boolean;
}

export interface ExportSummary {
  referrals: number;
  rows: number;
  pages: number;
  requests: number;
  seconds: number;
  expected: number | undefined;
  duplicates: number;
}

/** Every referral of every page in the API's order; a page is held only until those before it are written. */
export async function exportReferrals(
  client: ApiClient,
  out: Writable,
  opts: ExportOptions,
  progress: ProgressBar,
  signal: AbortSignal,
): Promise<ExportSummary> {
  const started = Date.now();
  const requestsBefore = client.requestCount;
  const summary = emptySummary();
  let bytes = 0;
  const write = async (text: string | Buffer) => {
    const buf = bytesOf(text, opts);
    bytes += buf.length;
    await send(out, buf, signal);
  };

  const sheet = opts.format === 'xlsx' ? await exportSheet(out, opts, signal) : undefined;
  const enc = sheet?.enc ?? exportEncoder(opts);
  /** Records written before the next (a resumed export: at least one when its checkpoint says so). */
  const count = { written: 0 };
  const resume = opts.resume;
  if (resume) {
    for await (const chunk of resume.prefix()) await write(chunk);
    Object.assign(summary, resume.summary);
    count.written = resume.wroteRecord ? 1 : 0;
  } else await write(enc.head);
  const duplicatesBefore = summary.duplicates;
  let lastPage = resume ? resume.page - 1 : 0;
  const mark = (ids: string[], totalPages: number | undefined) =>
    opts.onPage?.({
      page: lastPage,
      bytes,
      summary: { ...summary },
      wroteRecord: count.written > 0,
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
    } else if (resume && lastPage === resume.page - 1) await checkResumedCost(opts, resume.page - 1, page);
    const chunk = utf8Of(
      readingAnswer(page.requestId, () => encodePage(page.items, opts, enc, summary, count)),
    );
    await write(chunk);
    await sheet?.book.flush();
    lastPage++;
    if (opts.onPage) mark(idsOf(page.items), page.totalPages);
    progress.update(summary.pages, summary.referrals, page.totalPages);
  }
  await write(enc.tail(count.written));
  await sheet?.book.close();
  summary.requests = client.requestCount - requestsBefore;
  summary.seconds = (Date.now() - started) / 1000;
  return summary;
}

/** A piece of the export as bytes, escaped for a terminal when it goes to one. */
function bytesOf(text: string | Buffer, opts: ExportOptions): Buffer {
  if (opts.terminal)
    return utf8Of(terminalSafe(opts.format === 'xlsx' ? 'csv' : opts.format, [text.toString()]));
  return typeof text === 'string' ? Buffer.from(text) : text;
}

function emptySummary(): ExportSummary {
  return { referrals: 0, rows: 0, pages: 0, requests: 0, seconds: 0, expected: undefined, duplicates: 0 };
}

function exportEncoder(opts: ExportOptions) {
  const columns = opts.fields ?? COLUMNS[opts.rows];
  return encoder(opts.format === 'xlsx' ? 'csv' : opts.format, {
    json: 'line',
    csv: {
      header: columns,
      cells: (row) => columns.map((c) => csvValue((row as Row)[c])),
      guard: opts.formulaGuard,
      bom: opts.bom === true,
    },
  });
}

/** A workbook of the CSV rows and columns, typed: each row goes to the sheet, as no text. */
async function exportSheet(out: Writable, opts: ExportOptions, signal: AbortSignal) {
  const { openSheet } = await import('../output/xlsx.js');
  const columns = opts.fields ?? COLUMNS[opts.rows];
  const name = `${opts.rows.charAt(0).toUpperCase()}${opts.rows.slice(1)}s`;
  const book = await openSheet(out, {
    name,
    header: columns,
    signal,
    what: 'the export has',
    onNote: opts.onNote,
  });
  const enc: ReturnType<typeof exportEncoder> = {
    head: '',
    record: (_pieces, row) => book.add(columns.map((c) => csvValue((row as Row)[c]))),
    tail: () => '',
  };
  return { book, enc };
}

async function checkResumedCost(opts: ExportOptions, skip: number, page: OrderedPage): Promise<void> {
  const count: unknown = page.meta?.total_count;
  await opts.afterFirstPage?.(
    page.totalPages === undefined ? undefined : page.totalPages - skip,
    typeof count === 'number' ? Math.max(0, count - skip * opts.perPage) : undefined,
    page.items.length,
  );
}

function encodePage(
  items: unknown[],
  opts: ExportOptions,
  enc: ReturnType<typeof exportEncoder>,
  summary: ExportSummary,
  count: { written: number },
): string[] {
  const pickFields = opts.fields ? (r: unknown) => pick(r, opts.fields!) : (r: unknown) => r;
  const chunk: string[] = [];
  // CSV and Excel rows: the flat columns; JSON and NDJSON: the records (or their chosen fields).
  const flat = opts.format === 'csv' || opts.format === 'xlsx';
  for (const referral of items) {
    summary.referrals++;
    if (opts.rows === 'referral' && !flat) {
      if (opts.visitStatuses && !hasVisitIn(referral, opts.visitStatuses)) continue;
      summary.rows++;
      enc.record(chunk, pickFields(referral), count.written++);
      continue;
    }
    for (const row of rowsOf(referral, opts.rows, opts.visitStatuses)) {
      summary.rows++;
      enc.record(chunk, flat ? row : pickFields(row), count.written++);
    }
  }
  return chunk;
}

function idsOf(items: unknown[]): string[] {
  const ids: string[] = [];
  for (const r of items.slice(-100)) {
    const id = (r as { id?: unknown } | null)?.id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(String(id));
  }
  return ids;
}
