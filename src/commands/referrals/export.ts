import { lstat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { ApiClient } from '../../api/client.js';
import { VISIT_STATUSES } from '../../api/types.js';
import type { Query } from '../../api/url.js';
import { defineCommand } from '../../cli/define.js';
import { choice, completes, file, flag, type InferOptions, int, text } from '../../cli/options.js';
import { PARAM_OPTION, paramsQuery } from '../../cli/params.js';
import { renamedFields } from '../../cli/renamed-fields.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { Checkpoint, ResumePoint } from '../../export/checkpoint.js';
import type { AtomicFile } from '../../export/output-file.js';
import type { ExportFormat, ExportSummary } from '../../export/pipeline.js';
import type { RowKind } from '../../export/rows.js';
import { selectFields } from '../../output/fields.js';
import type { ProgressBar } from '../../output/progress.js';
import { EXPORT_COLUMNS, REFERRAL_FIELDS } from '../../resources/referrals.js';
import { count, num } from '../../util/plural.js';
import { tuneHeapForStreaming } from '../../util/streaming-heap.js';

const ROW_KINDS = ['referral', 'visit', 'procedure'] as const satisfies readonly RowKind[];

const OPTIONS = {
  rows: choice('--rows <kind>', ROW_KINDS, 'one row per referral (default), visit or procedure', {
    parse: (value) => {
      const v = value.trim().toLowerCase() as RowKind;
      if (!ROW_KINDS.includes(v))
        throw new UsageError(`--rows: unknown row kind "${value}"`, `Use one of: ${ROW_KINDS.join(', ')}.`);
      return v;
    },
  }),
  output: file(
    '-o, --output <file>',
    'write to this file (0600, renamed into place when complete; .csv/.json/.ndjson/.jsonl/.xlsx set the format); default stdout',
  ),
  param: PARAM_OPTION,
  concurrency: int('--concurrency <n>', 'pages fetched at once (default 4)', { max: 16 }),
  perPage: int('--per-page <n>', 'referrals per page (default 100)', { max: 1000 }),
  visitStatus: completes(
    text(
      '--visit-status <statuses>',
      'only visits with these statuses (comma-separated, any case; +NAME passes a status newer than this tool)',
    ),
    VISIT_STATUSES,
    { list: true },
  ),
  dryRun: flag(
    '--dry-run',
    'fetch page 1 only and report the referrals, pages and requests the export needs (with --resume: what is left after the checkpoint)',
  ),
  resume: flag('--resume', 'continue the checkpoint a failed or interrupted -o export kept'),
  resumable: flag('--resumable', 'keep a checkpoint if this -o export stops (default in the sandbox only)'),
  resumeOrStart: flag(
    '--resume-or-start',
    'continue a matching, unexpired checkpoint, else start and keep one as --resumable does (for a nightly job)',
  ),
};

export default defineCommand({
  path: ['referrals', 'export'],
  formats: ['csv', 'ndjson', 'json', 'xlsx'],
  fields: [
    { label: '--rows referral, csv/xlsx', fields: EXPORT_COLUMNS.referral },
    { label: '--rows referral, json/ndjson (the referral as sent)', fields: REFERRAL_FIELDS },
    { label: '--rows visit', fields: EXPORT_COLUMNS.visit },
    { label: '--rows procedure', fields: EXPORT_COLUMNS.procedure },
  ],
  options: OPTIONS,
  async run(ctx, _args, opts) {
    tuneHeapForStreaming();
    const plan = await planExport(ctx, opts);
    if (opts.dryRun) return dryRunExport(ctx, opts, plan);
    return runExport(ctx, opts, plan);
  },
});

type ExportOptions = InferOptions<typeof OPTIONS>;
interface ExportPlan {
  format: ExportFormat;
  rows: RowKind;
  fields: readonly string[] | undefined;
  visitStatuses: ReadonlySet<string> | undefined;
  query: Query;
  client: ApiClient;
  toFile: boolean;
}

/** Everything checked before any request: format, rows, fields, statuses, the target. */
async function planExport(ctx: Context, opts: ExportOptions): Promise<ExportPlan> {
  const [{ fileInPath, isFolder }, { exportFormat }, { parseVisitStatuses }] = await Promise.all([
    import('../../export/output-file.js'),
    import('../../export/target-format.js'),
    import('../../referrals/progress.js'),
  ]);
  // Without --format, the format follows -o's extension; both given and disagreeing, --format wins with a warning.
  const explicit = ctx.globals.format !== undefined || (Boolean(ctx.globals.json) && !opts.dryRun);
  const chosen = exportFormat(explicit ? (ctx.format('csv') as ExportFormat) : undefined, opts.output);
  const format = chosen.format;
  if (ctx.globals.bom && format !== 'csv')
    throw new UsageError(
      `--bom is for CSV output, not ${format}`,
      'Write to a .csv file, or leave --bom out.',
    );
  const rows = opts.rows ?? 'referral';
  // --fields: the flat columns of the rows, or (JSON/NDJSON referrals, as sent) the referral's fields.
  const asSent = rows === 'referral' && format !== 'csv' && format !== 'xlsx';
  const columns = asSent ? REFERRAL_FIELDS : EXPORT_COLUMNS[rows];
  const { chosen: fields } = selectFields(renamedFields(ctx, columns), columns, {
    extra: asSent,
    setLabel: `--rows ${rows}${rows === 'referral' ? `, ${format}` : ''}`,
  });
  const visitStatuses = opts.visitStatus === undefined ? undefined : parseVisitStatuses(opts.visitStatus);
  if (chosen.warning) ctx.note(chosen.warning);
  const query = paramsQuery(opts.param);
  const client = ctx.api();
  if (opts.output?.endsWith('/')) {
    // A file name inside it only when it is a folder, never a path inside a file.
    const inFile = fileInPath(`${opts.output}x`);
    throw new UsageError(
      inFile
        ? `-o ${opts.output} ends in "/", but ${inFile} is not a folder`
        : `-o ${opts.output} ends in "/", which names a folder`,
      `Give a file name, e.g. -o ${isFolder(opts.output) ? opts.output : ''}referrals.csv`,
    );
  }
  const toFile = Boolean(opts.output && opts.output !== '-');
  if (format === 'xlsx') await checkWorkbookTarget(ctx, opts, toFile);
  if (opts.resume && opts.resumeOrStart)
    throw new UsageError(
      '--resume continues a checkpoint or fails; --resume-or-start starts when there is none: pick one',
    );
  if ((opts.resume || opts.resumable || opts.resumeOrStart) && !toFile)
    throw new UsageError(
      `${checkpointFlag(opts)} needs -o FILE: only an export to a file keeps a checkpoint`,
    );
  return { format, rows, fields, visitStatuses, query, client, toFile };
}

/** The checkpoint flag given, for messages. */
const checkpointFlag = (opts: ExportOptions): string =>
  opts.resume ? '--resume' : opts.resumeOrStart ? '--resume-or-start' : '--resumable';

/** A workbook goes to a file or a pipe, never a terminal; a zip cannot be continued from a checkpoint. */
async function checkWorkbookTarget(ctx: Context, opts: ExportOptions, toFile: boolean): Promise<void> {
  const { refuseTerminal } = await import('../../output/format.js');
  // --dry-run writes no data: only the report, on standard error.
  if (!opts.dryRun)
    refuseTerminal(
      'xlsx',
      ctx.io.stdoutIsTTY && (!toFile || (await sameTerminal(opts.output as string))),
      'Write it to a file: -o referrals.xlsx (or redirect: > referrals.xlsx).',
    );
  if (opts.resume || opts.resumable || opts.resumeOrStart)
    throw new UsageError(
      `${checkpointFlag(opts)} is for CSV, JSON and NDJSON: an Excel workbook is written whole or not at all`,
    );
}

/** Whether -o names the terminal standard output is (/dev/stdout, /dev/tty, …). */
async function sameTerminal(output: string): Promise<boolean> {
  const { fstatSync, statSync } = await import('node:fs');
  try {
    const st = statSync(output);
    return st.isCharacterDevice() && (output === '/dev/tty' || st.rdev === fstatSync(1).rdev);
  } catch {
    return false;
  }
}

/** --dry-run: the cost of the export, or with --resume of what is left after the checkpoint. */
async function dryRunExport(ctx: Context, opts: ExportOptions, plan: ExportPlan): Promise<number> {
  const { dryRun } = await import('../../meter/dry-run.js');
  const saved =
    opts.resume || opts.resumeOrStart
      ? await openCheckpoint(ctx, await checkpointTarget(opts.output as string), opts, plan, true)
      : undefined;
  // --resume-or-start without a checkpoint to continue: the cost of a fresh start.
  const survey = saved?.resumePoint ? await saved.survey() : undefined;
  return dryRun(ctx, plan.client, saved?.savedParams ?? plan.query, opts.perPage ?? 100, survey);
}

async function runExport(ctx: Context, opts: ExportOptions, plan: ExportPlan): Promise<number> {
  const [{ exportReferrals }, { ProgressBar }] = await Promise.all([
    import('../../export/pipeline.js'),
    import('../../output/progress.js'),
  ]);
  const { file, checkpoint } = await openTarget(ctx, opts, plan);
  const query = checkpoint?.savedParams ?? plan.query;
  // Any export sweeps the expired checkpoints of earlier ones, wherever they were saved.
  const swept = (await import('../../export/checkpoint.js')).sweepExpired(ctx.env, ctx.now());
  if (swept > 0)
    ctx.note(`Removed ${count(swept, 'expired checkpoint')} of earlier exports (kept 24 hours).`);
  const resume = checkpoint?.resumePoint;
  const progress = new ProgressBar(
    ctx.io.stderr,
    ctx.io.stderrIsTTY,
    'Exporting referrals',
    ctx.io.columns ?? 80,
  );
  const stop: StopState = { file, checkpoint, progress, resume, firstPage: undefined };
  const onAbort = () => {
    progress.done();
    // A checkpoint is taken in the catch below, from what is on disk by then.
    if (!checkpoint?.keeping) file.discard();
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const summary = await exportReferrals(
      plan.client,
      file.stream,
      {
        format: plan.format,
        rows: plan.rows,
        query,
        perPage: opts.perPage ?? 100,
        concurrency: opts.concurrency ?? 4,
        visitStatuses: plan.visitStatuses,
        formulaGuard: ctx.globals.formulaGuard !== false,
        bom: ctx.globals.bom === true,
        fields: plan.fields,
        onNote: (text) => ctx.note(text),
        terminal: file.onTerminal(ctx.io.stdoutIsTTY),
        afterFirstPage: async (pages, count, items) => {
          stop.firstPage ??= items;
          if (plan.format === 'xlsx') (await import('../../output/xlsx.js')).checkSheetRows(count);
          const { checkCost, remainingAfterFirst } = await import('../../meter/cost.js');
          await checkCost(ctx, remainingAfterFirst(pages, count, opts.perPage ?? 100), 'This export');
        },
        resume,
        onPage: checkpoint?.keeping ? checkpoint.onPage : undefined,
      },
      progress,
      // A write error (a full disk, a reader gone) stops the page requests too.
      AbortSignal.any([ctx.signal, file.failed]),
    );
    // Every byte written and on disk (and renamed into place) before the summary says so.
    await file.commit();
    checkpoint?.finish();
    progress.done();
    reportDone(ctx, plan, summary, stop);
    return 0;
  } catch (err) {
    throw await reportStop(ctx, opts, plan, stop, err);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/** The file written (atomically, or stdout) and its checkpoint; checked before any request. */
async function openTarget(
  ctx: Context,
  opts: ExportOptions,
  plan: ExportPlan,
): Promise<{ file: AtomicFile; checkpoint: Checkpoint | undefined }> {
  const { AtomicFile: Atomic } = await import('../../export/output-file.js');
  const file = plan.toFile
    ? await Atomic.open(opts.output as string, {
        stdout: ctx.io.stdout,
        signal: ctx.signal,
        onWait: () => ctx.note(`Waiting for a reader on ${opts.output} (a FIFO)…`),
      })
    : Atomic.stdout(ctx.io.stdout);
  const checkpoint =
    file.kind === 'atomic' && plan.format !== 'xlsx'
      ? await openCheckpoint(ctx, file.target, opts, plan).catch((err: unknown) => {
          file.discard();
          throw err;
        })
      : undefined;
  if ((opts.resume || opts.resumeOrStart) && !checkpoint) {
    file.discard();
    throw new UsageError(
      `${checkpointFlag(opts)}: ${opts.output} is not a regular file, so it has no checkpoint`,
    );
  }
  return { file, checkpoint };
}

interface StopState {
  file: AtomicFile;
  checkpoint: Checkpoint | undefined;
  progress: ProgressBar;
  resume: ResumePoint | undefined;
  /** Referrals on the first page fetched, once it is in (before the cost check, before writing). */
  firstPage: number | undefined;
}

function reportDone(ctx: Context, plan: ExportPlan, summary: ExportSummary, stop: StopState): void {
  const { resume, file } = stop;
  const { rows, format, visitStatuses, toFile } = plan;
  if (resume)
    ctx.note(
      `Continued from the checkpoint: ${count(resume.page - 1, 'page')} saved earlier, ${num(summary.pages - resume.page + 1)} fetched now.`,
    );
  const where = toFile ? ` -> ${file.target}` : '';
  // What was written comes first: the rows; then what was read to get them.
  ctx.note(
    `Exported ${count(summary.rows, `${rows} row`)} (${format}) from ${count(summary.referrals, 'referral')} read in ${count(summary.pages, 'page')}, ${count(summary.requests, 'request')}, ${summary.seconds.toFixed(1)} s${where}`,
  );
  if (summary.rows === 0 && summary.referrals > 0)
    ctx.note(
      `warning: ${count(summary.referrals, 'referral')} ${summary.referrals === 1 ? 'was' : 'were'} read but no row was written${visitStatuses ? ` (no visit has status ${[...visitStatuses].join(', ')})` : ''}${(format === 'csv' || format === 'xlsx') && toFile ? ': the file holds only the header' : ''}.`,
    );
  if (summary.duplicates > 0)
    ctx.note(
      `warning: ${count(summary.duplicates, 'referral')} came again on a later page (same id) and ${summary.duplicates === 1 ? 'was' : 'were'} written once (records shifting between pages during the export?).`,
    );
  if (summary.expected !== undefined && summary.expected !== summary.referrals) {
    ctx.note(
      `warning: the API reported ${count(summary.expected, 'referral')} at the start but ${num(summary.referrals)} ${summary.referrals === 1 ? 'was' : 'were'} received (referrals created or removed during the export?).`,
    );
  }
}

const WOULD_HAVE_KEPT = '(Started with --resumable, its complete pages would have been kept for --resume.)';

/** After a failed or interrupted export: keeps a checkpoint where allowed, says what was left; returns the error to throw. */
async function reportStop(
  ctx: Context,
  opts: ExportOptions,
  plan: ExportPlan,
  stop: StopState,
  err: unknown,
): Promise<unknown> {
  const { file, checkpoint, progress, resume, firstPage } = stop;
  progress.done();
  const kept = checkpoint ? await checkpoint.save(file) : undefined;
  file.discard();
  if (kept && checkpoint) {
    ctx.note(
      `Export stopped: ${count(kept.pages, 'complete page')} (${count(kept.referrals, 'referral')}) ${kept.pages === 1 ? 'is' : 'are'} kept in a checkpoint, ${checkpoint.dir} (owner-only; not continued after 24 hours, removed by the next export to ${opts.output}); no file was written at ${file.target}.`,
    );
    const { continueCommand } = await import('../../export/checkpoint.js');
    ctx.note(`To continue: ${continueCommand(ctx.argv)}`);
    return file.writeFailure ?? err;
  }
  const done = progress.records;
  if (ctx.signal.aborted) {
    // Interrupted: only "interrupted" is said, and, where checkpoints are off, what would have kept them.
    if (checkpoint && !checkpoint.wanted && !checkpoint.blocked && done > 0)
      ctx.interruptNote = WOULD_HAVE_KEPT;
    return err;
  }
  const stopped =
    done === 0 && firstPage !== undefined
      ? `Export stopped after page ${resume?.page ?? 1} was fetched (${count(firstPage, 'referral')} read), before any was written`
      : `Export stopped after ${count(done, 'referral')}`;
  ctx.note(
    `${stopped}: ${file.kind === 'atomic' ? `no file was written at ${file.target}` : `the output ${plan.toFile ? `written to ${file.target} ` : ctx.io.stdoutIsTTY ? 'above ' : 'sent to standard output '}is incomplete`}.`,
  );
  if (checkpoint?.blocked && done > 0)
    ctx.note(`(No checkpoint was kept: ${checkpoint.dir} is in the way and was left alone.)`);
  else if (checkpoint && !checkpoint.wanted && done > 0) ctx.note(WOULD_HAVE_KEPT);
  return file.writeFailure ?? err;
}

/** The real path `--resume` would find the checkpoint beside, without creating anything (for --dry-run). */
async function checkpointTarget(output: string): Promise<string> {
  const { resolveTarget } = await import('../../export/output-file.js');
  let where: { path: string; fd?: number | undefined } = { path: resolve(output) };
  try {
    where = resolveTarget(where.path);
  } catch {}
  const st = await lstat(where.path).catch(() => undefined);
  if (where.fd !== undefined || (st && !st.isFile()))
    throw new UsageError(`--resume: ${output} is not a regular file, so it has no checkpoint`);
  return where.path;
}

async function openCheckpoint(
  ctx: Context,
  target: string,
  opts: ExportOptions,
  what: Pick<ExportPlan, 'format' | 'rows' | 'query' | 'visitStatuses' | 'fields'>,
  look = false,
) {
  const { Checkpoint, keepsCheckpoints } = await import('../../export/checkpoint.js');
  const env = ctx.environment().value;
  return Checkpoint.open({
    target,
    name: opts.output as string,
    // Everything that decides the file's bytes for the same data.
    identity: {
      env,
      baseUrl: ctx.baseUrl().value ?? null,
      format: what.format,
      rows: what.rows,
      perPage: opts.perPage ?? 100,
      params: Object.fromEntries(Object.entries(what.query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      visitStatuses: what.visitStatuses ? [...what.visitStatuses].sort() : null,
      formulaGuard: ctx.globals.formulaGuard !== false,
      bom: ctx.globals.bom === true,
      fields: what.fields ?? null,
    },
    resume: opts.resume === true,
    resumeOrStart: opts.resumeOrStart === true,
    keep: keepsCheckpoints(
      env,
      opts.resumable || opts.resume || opts.resumeOrStart,
      ctx.baseUrl().value,
      ctx.config.environment('sandbox').base_url,
    ),
    look,
    now: ctx.now,
    note: (text) => ctx.note(text),
    env: ctx.env,
  });
}
