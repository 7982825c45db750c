import { kindOf, readingAnswer } from '../api/shape.js';
import type { Referral } from '../api/types.js';
import type { Query } from '../api/url.js';
import type { Context, GlobalOptions } from '../context.js';
import { UnreadableAnswerError, UsageError } from '../errors.js';
import { type ExportFormat, exportReferrals } from '../export/pipeline.js';
import { latestVisitStatus, type RowKind } from '../export/rows.js';
import { ProgressBar } from '../output/progress.js';
import type { Column } from '../output/render.js';
import { clean, safe } from '../output/text.js';
import { checkReferral } from '../referrals/check.js';
import { renderReferral } from '../referrals/detail.js';
import { isUuid } from '../util/args.js';
import { AtomicFile } from '../util/atomic-file.js';
import { parseJsonInput, readInput } from '../util/input.js';
import { listCommand } from './list.js';

type Params = Array<[string, string]>;

/** --param KEY=VALUE pairs, passed through unchanged (the list filters are not published). */
function paramsQuery(params: Params | undefined): Query {
  // No prototype: a --param named "__proto__" is a query key like any other.
  const q = Object.create(null) as Record<string, string | string[]>;
  for (const [k, v] of params ?? []) {
    if (k === 'page' || k === 'per_page') throw new UsageError(`--param ${k}: use --page / --per-page`);
    const prev = q[k];
    if (k.endsWith('[]')) q[k] = [...(Array.isArray(prev) ? prev : prev !== undefined ? [prev] : []), v];
    else q[k] = v;
  }
  return q;
}

const patientName = (r: Referral) => {
  const p = r.patient;
  if (!p) return null;
  if (p.last_name || p.first_name) return [p.last_name, p.first_name].filter(Boolean).join(', ');
  return p.name ?? null;
};

const listColumns: Column<Referral>[] = [
  { header: 'Reference', get: (r) => r.reference },
  { header: 'Status', get: (r) => r.status },
  { header: 'Line of business', get: (r) => r.line_of_business },
  { header: 'Patient', get: patientName },
  { header: 'Visits', get: (r) => (Array.isArray(r.visits) ? r.visits.length : null) },
  { header: 'Latest visit', get: (r) => latestVisitStatus(r.visits) },
  { header: 'ID', get: (r) => r.id },
];

export async function list(
  ctx: Context,
  opts: GlobalOptions & { page?: number; perPage?: number; all?: boolean; param?: Params },
): Promise<number> {
  if (opts.all && opts.page !== undefined) throw new UsageError('--all and --page cannot be used together');
  return listCommand<Referral>(ctx, {
    path: '/referrals',
    key: 'referrals',
    query: paramsQuery(opts.param),
    page: opts.page,
    perPage: opts.perPage,
    all: opts.all,
    noun: 'referrals',
    columns: listColumns,
    check: (r, i) => checkReferral(r, `referral item ${i + 1}`),
    emptyHint: 'No referrals match.',
  });
}

export async function get(ctx: Context, id: string): Promise<number> {
  const rid = id.trim();
  if (!isUuid(rid))
    throw new UsageError(`"${id}" is not a referral id (a UUID)`, 'List them with: imaging referrals list');
  const format = ctx.format('table', ['table', 'json']);
  const res = await ctx.api().request<Referral>({ path: `/referrals/${encodeURIComponent(rid)}` });
  if (format === 'json') {
    // Exactly as the API sent it.
    ctx.io.stdout.write(res.raw);
    if (res.raw.length === 0 || res.raw[res.raw.length - 1] !== 0x0a) ctx.io.stdout.write('\n');
    return 0;
  }
  readingAnswer(res.requestId, () => checkReferral(res.data));
  ctx.out.write(renderReferral(res.data, { color: ctx.colorLevel() > 0, timeZone: ctx.env.TZ || undefined }));
  return 0;
}

export async function create(ctx: Context, opts: GlobalOptions & { file?: string }): Promise<number> {
  if (!opts.file) throw new UsageError('--file is required (a JSON file, or - for standard input)');
  const format = ctx.format('table', ['table', 'json']);
  const bytes = await readInput(ctx, opts.file, '--file');
  const parsed = parseJsonInput(bytes, opts.file === '-' ? 'standard input' : opts.file);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError('the referral must be a JSON object', 'Nothing was sent.');
  }
  const env = ctx.environment().value;
  const client = ctx.api(); // token and base URL checked before anyone is asked anything
  if (env === 'production' && !ctx.globals.yes) {
    if (!ctx.io.stdinIsTTY || opts.file === '-') {
      throw new UsageError(
        'creating a referral in production needs confirmation',
        opts.file === '-'
          ? 'The referral came on standard input, so it cannot also answer a question: add --yes.'
          : 'There is no terminal to ask on: add --yes to confirm.',
      );
    }
    const ok = await (await ctx.prompter()).confirm(
      `Create this referral in PRODUCTION (${client.baseUrl})?`,
    );
    if (!ok) {
      ctx.note('Nothing was sent.');
      return 1;
    }
  }
  // The create payload is not published: the bytes go as they are, after the syntax check.
  const res = await client.request<Referral>({ method: 'POST', path: '/referrals', body: bytes });
  const created = res.data as unknown as Record<string, unknown> | null;
  const referral = (
    created && typeof created === 'object' && !Array.isArray(created) && 'referral' in created
      ? created.referral
      : created
  ) as Referral | null;
  if (format === 'json') {
    ctx.io.stdout.write(`${JSON.stringify(res.data, null, 2)}\n`);
  } else {
    readingAnswer(res.requestId, () => {
      if (typeof referral !== 'object' || referral === null || Array.isArray(referral))
        throw new UnreadableAnswerError(`the created referral is ${kindOf(referral)}, not an object`);
      checkReferral(referral, 'the created referral');
    });
    ctx.out.write(
      renderReferral(referral as Referral, {
        color: ctx.colorLevel() > 0,
        timeZone: ctx.env.TZ || undefined,
      }),
    );
  }
  ctx.note(
    safe`${`Created referral ${clean(referral?.reference ?? '')} ${clean(referral?.id ?? '')}`.replace(/\s+/g, ' ').trim()}`,
  );
  return 0;
}

export interface ExportOpts extends GlobalOptions {
  rows?: string;
  output?: string;
  param?: Params;
  concurrency?: number;
  perPage?: number;
  visitStatus?: string;
  formulaGuard?: boolean;
}

const ROW_KINDS: readonly RowKind[] = ['referral', 'visit', 'procedure'];

export async function exportCommand(ctx: Context, opts: ExportOpts): Promise<number> {
  const format = ctx.format('csv', ['csv', 'ndjson', 'json']) as ExportFormat;
  const rows = (opts.rows ?? 'referral').trim().toLowerCase() as RowKind;
  if (!ROW_KINDS.includes(rows))
    throw new UsageError(`--rows: unknown row kind "${opts.rows}"`, `Use one of: ${ROW_KINDS.join(', ')}.`);
  const visitStatuses = opts.visitStatus === undefined ? undefined : splitStatuses(opts.visitStatus);
  const query = paramsQuery(opts.param);
  const client = ctx.api();
  if (opts.output === '') throw new UsageError('--output needs a file name');
  const toFile = Boolean(opts.output && opts.output !== '-');
  const file = toFile
    ? await AtomicFile.open(opts.output as string, {
        stdout: ctx.io.stdout,
        signal: ctx.signal,
        onWait: () => ctx.note(`Waiting for a reader on ${opts.output} (a FIFO)…`),
      })
    : AtomicFile.stdout(ctx.io.stdout);
  const progress = new ProgressBar(
    ctx.io.stderr,
    ctx.io.stderrIsTTY,
    'Exporting referrals',
    ctx.io.columns ?? 80,
  );
  const onAbort = () => {
    progress.done();
    file.discard();
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const summary = await exportReferrals(
      client,
      file.stream,
      {
        format,
        rows,
        query,
        perPage: opts.perPage ?? 100,
        concurrency: opts.concurrency ?? 4,
        visitStatuses,
        formulaGuard: opts.formulaGuard !== false,
      },
      progress,
      // A write error (a full disk, a reader gone) stops the page requests too.
      AbortSignal.any([ctx.signal, file.failed]),
    );
    // Every byte written and on disk (and renamed into place) before the summary says so.
    await file.commit();
    progress.done();
    const where = toFile ? ` -> ${file.target}` : '';
    ctx.note(
      `Exported ${summary.referrals} referrals as ${summary.rows} ${rows} row${summary.rows === 1 ? '' : 's'} (${format}) from ${summary.pages} page${summary.pages === 1 ? '' : 's'} in ${summary.requests} request${summary.requests === 1 ? '' : 's'}, ${summary.seconds.toFixed(1)} s${where}`,
    );
    if (summary.duplicates > 0)
      ctx.note(
        `Warning: ${summary.duplicates} referral${summary.duplicates === 1 ? '' : 's'} came again on a later page (same id) and ${summary.duplicates === 1 ? 'was' : 'were'} written once (records shifting between pages during the export?).`,
      );
    if (summary.expected !== undefined && summary.expected !== summary.referrals) {
      ctx.note(
        `Warning: the API reported ${summary.expected} referrals at the start but ${summary.referrals} were received (referrals created or removed during the export?).`,
      );
    }
    return 0;
  } catch (err) {
    progress.done();
    file.discard();
    if (ctx.signal.aborted) throw err;
    const done = progress.records;
    ctx.note(
      `Export stopped after ${done} referral${done === 1 ? '' : 's'}: ${file.kind === 'atomic' ? `no file was written at ${file.target}` : `the output ${toFile ? `written to ${file.target} ` : 'above '}is incomplete`}.`,
    );
    throw file.writeFailure ?? err;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

function splitStatuses(value: string): Set<string> {
  const set = new Set(
    value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
  if (set.size === 0) throw new UsageError('--visit-status needs at least one status');
  return set;
}
