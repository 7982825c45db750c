import { defineCommand } from '../../cli/define.js';
import { int, text } from '../../cli/options.js';
import { AuthError, CliError, ExitCode, UsageError } from '../../errors.js';
import {
  allowanceOf,
  appendRecords,
  describeView,
  MeterUnusable,
  meterKey,
  meterPath,
  SANDBOX_LIMIT,
} from '../../meter/meter.js';
import { writeJson } from '../../output/write.js';
import { num } from '../../util/plural.js';
import { peopleTime } from '../../util/time.js';

export default defineCommand({
  path: ['auth', 'allowance'],
  formats: ['table', 'json'],
  description:
    'The sandbox allowance is 2,000 successful requests or 7 days; this machine counts the requests of the sandbox token. Sends no request. When the token was also used elsewhere, state what this machine cannot know: --used N (requests used so far) and/or --since DATE (when the first one was made; the 7-day window ends a week later).',
  options: {
    used: int('--used <n>', 'set the count of successful requests used so far (0 to 2,000)', { min: 0 }),
    since: text('--since <date>', 'set when the first request was made (YYYY-MM-DD or an ISO 8601 time)'),
  },
  examples: ['imaging auth allowance', 'imaging auth allowance --used 350 --since 2026-11-20'],
  async run(ctx, _args, opts) {
    const env = ctx.environment();
    if (env.value !== 'sandbox') {
      throw new UsageError(
        `the allowance meter counts sandbox tokens only (the environment is ${env.value}, from ${env.source})`,
        'Use --env sandbox.',
      );
    }
    if (opts.used !== undefined && opts.used > SANDBOX_LIMIT)
      throw new UsageError(
        `--used: ${num(opts.used)} is more than a sandbox token allows (${num(SANDBOX_LIMIT)} successful requests)`,
        `Give the count used so far, 0 to ${num(SANDBOX_LIMIT)}; a token the sandbox refuses with 429 is used up (${num(SANDBOX_LIMIT)}).`,
      );
    const now = ctx.now().getTime();
    const since = opts.since === undefined ? undefined : parseSince(opts.since, now);
    const baseUrl = ctx.requireBaseUrl('sandbox');
    const token = ctx.token('sandbox').value;
    if (!token)
      throw new AuthError(
        'not logged in to the sandbox environment',
        'Run: imaging auth login (or set IMAGING_TOKEN)',
      );
    if (opts.used !== undefined || since !== undefined) {
      const key = meterKey(new URL(baseUrl).origin, token);
      const path = meterPath(ctx.env);
      try {
        appendRecords(path, `${key} set ${opts.used ?? '-'} ${since ?? '-'} ${now}\n`);
      } catch (err) {
        throw new CliError(
          err instanceof MeterUnusable
            ? `cannot write the allowance meter: ${err.message}`
            : `cannot write the allowance meter ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
          ExitCode.failure,
          'Check the folder is yours and writable, or point IMAGING_CONFIG_DIR elsewhere.',
        );
      }
    }
    const view = allowanceOf(ctx, baseUrl, token);
    if (!view) throw new CliError('internal: no allowance view');
    if (ctx.format('table') === 'json') {
      writeJson(ctx.sink(), view);
      return 0;
    }
    ctx.out.line(`Sandbox allowance: ${describeView(view, ctx.now().getTime())}`);
    if (view.unreadable) {
      // Exit 0: this is a view, and the meter being off never fails a command; the reason is above.
      ctx.note(
        'The meter is off until this is fixed: move it away (a new meter file is created at the next sandbox request), or point IMAGING_CONFIG_DIR elsewhere.',
      );
      return 0;
    }
    if (view.since) ctx.out.line(`First request: ${peopleTime(view.since, { timeZone: ctx.env.TZ })}`);
    ctx.note(
      `Counted on this machine only (${num(SANDBOX_LIMIT)} successful requests or 7 days per sandbox token). If the token was also used elsewhere: imaging auth allowance --used N --since DATE`,
    );
    return 0;
  },
});

function parseSince(value: string, now: number): number {
  const v = value.trim();
  const ymd = /^(\d{4})-(\d{2})-(\d{2})(T|$)/.exec(v);
  const t = ymd ? Date.parse(ymd[4] ? v : `${v}T00:00:00Z`) : Number.NaN;
  // A day the calendar does not have (2026-02-30) is no date: Date.parse would roll it over.
  const [year, month, day] = [Number(ymd?.[1]), Number(ymd?.[2]) - 1, Number(ymd?.[3])];
  const date = new Date(Date.UTC(year, month, day));
  const real = Number.isFinite(t) && date.getUTCMonth() === month && date.getUTCDate() === day;
  if (!real)
    throw new UsageError(
      `--since: "${value}" is not a date`,
      'Use YYYY-MM-DD (UTC) or an ISO 8601 time, e.g. 2026-11-20T09:30:00Z.',
    );
  // Sandbox tokens are recent: a time before 2000 is a typo.
  if (t < Date.UTC(2000, 0, 1))
    throw new UsageError(`--since: ${v} is before 2000: not when this token was first used`);
  // A minute of slack for clocks a little apart.
  if (t > now + 60_000) throw new UsageError(`--since: ${v} is in the future`);
  return t;
}
