import { defineCommand } from '../../cli/define.js';
import { duration, formatDuration } from '../../cli/duration.js';
import { arg, completes, file, int, text } from '../../cli/options.js';
import type { Context } from '../../context.js';
import { CliError, ExitCode, InterruptedError, UsageError } from '../../errors.js';
import type { OutputFormat } from '../../output/format.js';
import { PROGRESS, parseStatusList } from '../../referrals/progress.js';
import type { Watched, WatchTarget } from '../../referrals/watch.js';
import type { WatchView } from '../../referrals/watch-view.js';
import { count, num } from '../../util/plural.js';

const DEFAULT_INTERVAL_MS = 60_000;
/** The shortest interval: a sandbox or production server is polled no more than this often. */
const FLOOR_MS = 10_000;
/** Against the emulator (--env local), where nothing is counted. */
const LOCAL_FLOOR_MS = 1_000;
/** The longest interval: a referral read less than daily is better looked up by hand. */
const CEILING_MS = 86_400_000;
const DEFAULT_CONCURRENCY = 8;

const RULE = `Polls each referral (GET /referrals/{id}, one request a referral each interval) and reports every visit status change: on a terminal a table updated in place with the last changes under it (every change listed when the watch ends), piped a line per change and the last state at the end, with --format ndjson one visit.status_changed event per change.

Progress follows the spec's visit statuses in order, without exam_not_completed and canceled: ${PROGRESS.join(', ')}. A visit has reached a status when it is at it or later. A visit at exam_not_completed has reached booked and earlier, never complete or later. Canceled visits are left out unless all are. A referral is done when each of its counted visits has reached one of the --until statuses; it cannot get there when all its visits are canceled or a visit stopped at exam_not_completed before the awaited status. A referral with no visit yet is waited for.

Exit 0 when every referral is done; 10 when one cannot get there; 9 when --within passes first. Ctrl-C prints the last state and exits 130.`;

export default defineCommand({
  path: ['referrals', 'watch'],
  description: RULE,
  formats: ['table', 'ndjson'],
  csv: false,
  args: [arg('[referrals...]', 'referral ids (UUIDs) or references')],
  examples: [
    'imaging referrals watch R-240007   # until every visit has its report (report_uploaded or later)',
    'imaging referrals watch R-240007 --until booked --within 2d   # exit 9 if not booked within 2 days',
    'imaging referrals watch --from open.csv --format ndjson > changes.ndjson   # an export, one event per change',
  ],
  options: {
    until: completes(
      text(
        '--until <statuses>',
        'visit statuses to wait for (comma-separated, any case; +NAME for a status newer than this tool; default report_uploaded)',
      ),
      PROGRESS,
      { list: true },
    ),
    interval: duration(
      '--interval <duration>',
      'time between two reads of a referral: 90s, 15m, 1h (default 60s; at least 10s, 1s with --env local; at most 24h)',
      {
        ms: CEILING_MS,
        said: '24h',
        hint: 'Give --within for how long to watch; --interval is the time between two reads.',
      },
    ),
    within: duration(
      '--within <duration>',
      'give up after this long (24h, 2d): exit 9 if a referral is not done by then (default: until done)',
    ),
    from: file(
      '--from <file>',
      "referrals to watch from a file (- for stdin): an export (CSV, NDJSON, JSON) or one ID or reference a line; a file of your own, not another user's file, FIFO or symlink",
    ),
    concurrency: int('--concurrency <n>', `referrals read at once (default ${DEFAULT_CONCURRENCY})`, {
      max: 16,
    }),
  },
  async run(ctx, args, opts) {
    const format = ctx.format('table');
    const until = parseStatusList(opts.until ?? 'report_uploaded', '--until');
    // The two side exits are not on the progress path: a referral is never "done" at them.
    const sideExit = [...until].find((s) => s === 'canceled' || s === 'exam_not_completed');
    if (sideExit)
      throw new UsageError(
        `--until ${sideExit} is not a status a referral progresses to`,
        `Watch for a status on the way (${PROGRESS.join(', ')}); a referral whose visits are all canceled or stopped at exam_not_completed ends the watch with exit 10.`,
      );
    const local = ctx.environment().value === 'local';
    const floor = local ? LOCAL_FLOOR_MS : FLOOR_MS;
    const intervalMs = opts.interval ?? DEFAULT_INTERVAL_MS;
    if (intervalMs < floor)
      throw new UsageError(
        `--interval: ${formatDuration(intervalMs)} is too short (at least ${formatDuration(floor)})`,
        local ? undefined : 'Each read is a request; against the emulator (--env local) the floor is 1s.',
      );
    const texts = await named(ctx, (args[0] as unknown as string[] | undefined) ?? [], opts.from);
    checkAllowance(ctx, texts.length, intervalMs, opts.within);
    const targets = await resolve(ctx, texts);
    const { watchReferrals } = await import('../../referrals/watch.js');
    const view = await makeView(ctx, format, {
      count: targets.length,
      until: [...until],
      intervalMs,
      withinMs: opts.within,
    });
    const deadline = opts.within === undefined ? undefined : Date.now() + opts.within;
    let last: Watched[];
    try {
      last = await watchReferrals(
        ctx,
        targets,
        { until, intervalMs, deadline, concurrency: opts.concurrency ?? DEFAULT_CONCURRENCY },
        view.hooks,
      );
    } catch (err) {
      if (err instanceof InterruptedError || ctx.signal.aborted) view.end('interrupted');
      throw err;
    }
    view.end('over');
    const cannot = last.filter((w) => w.standing === 'cannot');
    const waiting = last.filter((w) => w.standing !== 'done' && w.standing !== 'cannot');
    if (cannot.length > 0) {
      // Which side exit each took: every visit canceled, or a visit still counted stopped at exam_not_completed.
      const allCanceled = (w: Watched) => w.visits.every((v) => v.status.toLowerCase() === 'canceled');
      const why = [
        [cannot.filter(allCanceled), 'every visit canceled'],
        [cannot.filter((w) => !allCanceled(w)), 'a visit stopped at exam_not_completed'],
      ] as const;
      ctx.note(
        `cannot happen: ${why
          .filter(([ws]) => ws.length > 0)
          .map(([ws, reason]) => `${list(ws)} cannot reach ${[...until].join(' or ')} (${reason})`)
          .join('; ')}`,
      );
      return ExitCode.cannotHappen;
    }
    if (waiting.length > 0) {
      ctx.note(
        `not yet: ${list(waiting)} ${waiting.length === 1 ? 'has' : 'have'} not reached ${[...until].join(' or ')} within ${formatDuration(opts.within ?? 0)}`,
      );
      return ExitCode.notYet;
    }
    ctx.note(
      `done: ${targets.length === 1 ? (last[0]?.reference ?? last[0]?.id ?? 'the referral') : `all ${num(targets.length)} referrals`} reached ${[...until].join(' or ')}`,
    );
    return ExitCode.ok;
  },
});

function list(ws: readonly Watched[]): string {
  const names = ws.slice(0, 5).map((w) => w.reference ?? w.id);
  return ws.length > 5 ? `${names.join(', ')} and ${num(ws.length - 5)} more` : names.join(', ');
}

/** The IDs and references given: arguments, then the --from file's, each once. */
async function named(ctx: Context, args: readonly string[], from: string | undefined): Promise<string[]> {
  const texts = [...args];
  if (from !== undefined) {
    const [{ readInput }, { referralsInFile }] = await Promise.all([
      import('../../cli/input.js'),
      import('../../referrals/from-file.js'),
    ]);
    const bytes = await readInput(ctx, from, '--from');
    texts.push(...referralsInFile(bytes.toString('utf8'), from === '-' ? 'standard input' : from));
  }
  if (texts.length === 0)
    throw new UsageError(
      'name the referrals to watch: IDs or references, or --from FILE',
      'e.g. imaging referrals watch R-240004, or imaging referrals watch --from referrals.csv',
    );
  return [...new Set(texts.map((t) => t.trim()))];
}

/** IDs as given; references through the list (their snapshot counts as the first read); each referral once. */
async function resolve(ctx: Context, texts: readonly string[]): Promise<WatchTarget[]> {
  const { resolveReferrals } = await import('../../referrals/resolve.js');
  const seen = new Set<string>();
  return (await resolveReferrals(ctx, texts)).filter((r) => !seen.has(r.id) && seen.add(r.id));
}

/**
 * In the sandbox, the requests an hour before starting, and a refusal (exit 6, unless --yes) when the
 * meter says the run would use up what is left before --within ends (or within a day without it).
 */
function checkAllowance(
  ctx: Context,
  referrals: number,
  intervalMs: number,
  withinMs: number | undefined,
): void {
  ctx.api(); // the meter is the API client's
  const meter = ctx.meter();
  if (!meter) return;
  let view: ReturnType<typeof meter.view>;
  try {
    view = meter.view();
  } catch {
    return;
  }
  // The rate in the unit that gives a whole number: per hour, else per day (an interval over 1h).
  const perHour = (referrals * 3_600_000) / intervalMs;
  const rate =
    perHour >= 1
      ? `${count(Math.ceil(perHour), 'request')} an hour`
      : `${count(Math.ceil(perHour * 24), 'request')} a day`;
  const horizon = withinMs ?? 86_400_000;
  const needed = referrals * (Math.floor(horizon / intervalMs) + 1);
  const left = view.exhausted ? 0 : Math.max(0, view.limit - view.used);
  const span = withinMs === undefined ? 'a day' : formatDuration(withinMs);
  ctx.note(
    `This watch sends about ${rate} (one per referral every ${formatDuration(intervalMs)}), at most ${count(needed, 'request')} ${withinMs === undefined ? 'in a day' : `within ${span}`}; about ${num(left)} ${left === 1 ? 'is' : 'are'} left in the sandbox allowance (counted on this machine).`,
  );
  if (needed <= left) return;
  if (ctx.globals.yes) {
    ctx.note('warning: that is more than is left; going ahead (--yes).');
    return;
  }
  throw new CliError(
    `this watch would use up the sandbox allowance within ${span} (${num(needed)} requests, ≈${num(left)} left): stopped before sending any`,
    ExitCode.limit,
    'Watch fewer referrals, give a longer --interval or a shorter --within, correct the meter (imaging auth allowance --used N), or add --yes to go ahead anyway.',
  );
}

/** The view for the output: events (NDJSON), lines (a pipe), or a live table (a terminal). */
async function makeView(ctx: Context, format: OutputFormat, setup: ViewSetup): Promise<WatchView> {
  const v = await import('../../referrals/watch-view.js');
  const within = setup.withinMs !== undefined ? `, within ${formatDuration(setup.withinMs)}` : '';
  const head = `Watching ${count(setup.count, 'referral')} until ${setup.until.join(' or ')}, every ${formatDuration(setup.intervalMs)}${within}`;
  if (format === 'ndjson' || !ctx.io.stdoutIsTTY) return v.streamView(ctx, head, format === 'ndjson');
  return v.liveView(ctx, head);
}

interface ViewSetup {
  count: number;
  until: string[];
  intervalMs: number;
  withinMs: number | undefined;
}
