import { VISIT_STATUSES } from '../../api/types.js';
import { UsageError } from '../../errors.js';
import type { ExportFormat } from '../../export/pipeline.js';
import type { RowKind } from '../../export/rows.js';
import { EXPORT_COLUMNS, REFERRAL_FIELDS } from '../../output/field-sets.js';
import { selectFields } from '../../output/fields.js';
import { defineCommand } from '../define.js';
import { choice, completes, file, flag, int, text } from '../options.js';
import { PARAM_OPTION, paramsQuery } from './params.js';

const ROW_KINDS = ['referral', 'visit', 'procedure'] as const satisfies readonly RowKind[];

export default defineCommand({
  path: ['referrals', 'export'],
  fields: [
    { label: '--rows referral, csv', fields: EXPORT_COLUMNS.referral },
    { label: '--rows referral, json/ndjson (the referral as sent)', fields: REFERRAL_FIELDS },
    { label: '--rows visit', fields: EXPORT_COLUMNS.visit },
    { label: '--rows procedure', fields: EXPORT_COLUMNS.procedure },
  ],
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
      'write to this file (0600, renamed into place when complete; .csv/.json/.ndjson/.jsonl set the format); default stdout',
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
      'fetch page 1 only and report the referrals, pages and requests the export needs',
    ),
  },
  async run(ctx, _args, opts) {
    const [{ exportReferrals }, { AtomicFile }, { ProgressBar }, { exportFormat }, { parseVisitStatuses }] =
      await Promise.all([
        import('../../export/pipeline.js'),
        import('../../util/atomic-file.js'),
        import('../../output/progress.js'),
        import('../../export/target-format.js'),
        import('./statuses.js'),
      ]);
    // Without --format, the format follows -o's extension (x.json is JSON); both given and
    // disagreeing, --format wins with a warning.
    const explicit = ctx.globals.format !== undefined || Boolean(ctx.globals.json);
    const chosen = exportFormat(
      explicit ? (ctx.format('csv', ['csv', 'ndjson', 'json']) as ExportFormat) : undefined,
      opts.output,
    );
    const format = chosen.format;
    if (ctx.globals.bom && format !== 'csv')
      throw new UsageError(
        `--bom is for CSV output, not ${format}`,
        'Write to a .csv file, or leave --bom out.',
      );
    const rows = opts.rows ?? 'referral';
    // --fields: the flat columns of the rows, or (JSON/NDJSON referrals, as sent) the referral's fields.
    const asSent = rows === 'referral' && format !== 'csv';
    const { chosen: fields } = selectFields(
      ctx.globals.fields,
      asSent ? REFERRAL_FIELDS : EXPORT_COLUMNS[rows],
      {
        extra: asSent,
        setLabel: asSent
          ? `--rows referral, ${format}`
          : `--rows ${rows}${rows === 'referral' ? ', csv' : ''}`,
      },
    );
    const visitStatuses = opts.visitStatus === undefined ? undefined : parseVisitStatuses(opts.visitStatus);
    if (chosen.warning) ctx.note(chosen.warning);
    const query = paramsQuery(opts.param);
    const client = ctx.api();
    if (opts.output === '') throw new UsageError('--output needs a file name');
    if (opts.dryRun) {
      const { dryRun } = await import('../../meter/dry-run.js');
      return dryRun(ctx, client, query, opts.perPage ?? 100);
    }
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
          formulaGuard: ctx.globals.formulaGuard !== false,
          bom: ctx.globals.bom === true,
          fields,
          afterFirstPage: async (pages, count) => {
            const { checkCost, remainingAfterFirst } = await import('../../meter/cost.js');
            await checkCost(ctx, remainingAfterFirst(pages, count, opts.perPage ?? 100), 'This export');
          },
        },
        progress,
        // A write error (a full disk, a reader gone) stops the page requests too.
        AbortSignal.any([ctx.signal, file.failed]),
      );
      // Every byte written and on disk (and renamed into place) before the summary says so.
      await file.commit();
      progress.done();
      const where = toFile ? ` -> ${file.target}` : '';
      // What was written comes first: the rows; then what was read to get them.
      ctx.note(
        `Exported ${summary.rows} ${rows} row${summary.rows === 1 ? '' : 's'} (${format}) from ${summary.referrals} referral${summary.referrals === 1 ? '' : 's'} read in ${summary.pages} page${summary.pages === 1 ? '' : 's'}, ${summary.requests} request${summary.requests === 1 ? '' : 's'}, ${summary.seconds.toFixed(1)} s${where}`,
      );
      if (summary.rows === 0 && summary.referrals > 0)
        ctx.note(
          `Warning: ${summary.referrals} referral${summary.referrals === 1 ? ' was' : 's were'} read but no row was written${visitStatuses ? ` (no visit has status ${[...visitStatuses].join(', ')})` : ''}${format === 'csv' ? ': the file holds only the header' : ''}.`,
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
  },
});
