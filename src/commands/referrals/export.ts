import { UsageError } from '../../errors.js';
import type { ExportFormat } from '../../export/pipeline.js';
import type { RowKind } from '../../export/rows.js';
import { defineCommand } from '../define.js';
import { choice, file, int, negate, text } from '../options.js';
import { PARAM_OPTION, paramsQuery } from './params.js';

const ROW_KINDS = ['referral', 'visit', 'procedure'] as const satisfies readonly RowKind[];

export default defineCommand({
  path: ['referrals', 'export'],
  options: {
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
      'write to this file (0600, renamed into place when complete); default stdout',
    ),
    param: PARAM_OPTION,
    concurrency: int('--concurrency <n>', 'pages fetched at once (default 4)', { max: 16 }),
    perPage: int('--per-page <n>', 'referrals per page (default 100)', { max: 1000 }),
    visitStatus: text('--visit-status <statuses>', 'only visits with these statuses (comma-separated)'),
    formulaGuard: negate('--no-formula-guard', "CSV: do not prefix cells starting with = + - @ with '"),
  },
  async run(ctx, _args, opts) {
    const [{ exportReferrals }, { AtomicFile }, { ProgressBar }] = await Promise.all([
      import('../../export/pipeline.js'),
      import('../../util/atomic-file.js'),
      import('../../output/progress.js'),
    ]);
    const format = ctx.format('csv', ['csv', 'ndjson', 'json']) as ExportFormat;
    const rows = opts.rows ?? 'referral';
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
          `warning: ${summary.duplicates} referral${summary.duplicates === 1 ? '' : 's'} came again on a later page (same id) and ${summary.duplicates === 1 ? 'was' : 'were'} written once (records shifting between pages during the export?).`,
        );
      if (summary.expected !== undefined && summary.expected !== summary.referrals) {
        ctx.note(
          `warning: the API reported ${summary.expected} referrals at the start but ${summary.referrals} were received (referrals created or removed during the export?).`,
        );
      }
      return 0;
    } catch (err) {
      progress.done();
      file.discard();
      if (ctx.signal.aborted) throw err;
      const done = progress.records;
      ctx.note(
        `Export stopped after ${done} referral${done === 1 ? '' : 's'}: ${file.kind === 'atomic' ? `no file was written at ${file.target}` : `the output ${toFile ? `written to ${file.target} ` : ctx.io.stdoutIsTTY ? 'above ' : 'sent to standard output '}is incomplete`}.`,
      );
      throw file.writeFailure ?? err;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  },
});

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
