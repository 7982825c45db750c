import { getReferral } from '../../api/endpoints/referrals.js';
import { kindOf, readingAnswer } from '../../api/shape.js';
import { type Referral, VISIT_STATUSES } from '../../api/types.js';
import { isUuid, normaliseUuid } from '../../cli/args.js';
import { defineCommand } from '../../cli/define.js';
import { arg, completes, flag, text } from '../../cli/options.js';
import type { Context } from '../../context.js';
import { ApiError, InterruptedError, UnreadableAnswerError, UsageError } from '../../errors.js';
import { clean, safe } from '../../output/text.js';
import { parseStatusList } from '../../referrals/progress.js';
import { resolveReferral } from '../../referrals/resolve.js';
import { sandboxEnvironment, sandboxRoute, sendSandbox, writeAnswer } from '../../sandbox/tools.js';

export default defineCommand({
  path: ['sandbox', 'advance'],
  formats: ['table', 'json'],
  description:
    'Moves a sandbox visit to a status, as the service would (it then sends visit.status_changed to your group\'s webhook URL, signed). The argument is a visit id, or a referral\'s id or reference when the referral has one visit (with several, each is listed: name one). Sends {"status": STATUS} to path.sandbox_advance (default POST /api/v2/sandbox/visits/{id}/advance; the path and body are not published: set the path with imaging config set path.sandbox_advance). Sandbox and local only.',
  args: [arg('<visit-id>', "a visit id, or a referral's id or reference when it has a single visit")],
  options: {
    to: completes(
      text(
        '--to <status>',
        'the visit status to move to (any case; +NAME passes a status newer than this tool)',
        {
          required: true,
        },
      ),
      VISIT_STATUSES,
    ),
    dryRun: flag(
      '--dry-run',
      'show the request and send nothing (a referral is still read to find its visit)',
    ),
  },
  examples: [
    'imaging sandbox advance VISIT_ID --to booked',
    'imaging sandbox advance R-240006 --to report_uploaded --dry-run   # a referral with one visit',
  ],
  async run(ctx, [target], opts) {
    const env = sandboxEnvironment(ctx, 'advance');
    const format = ctx.format('table');
    const statuses = [...parseStatusList(opts.to, '--to')];
    if (statuses.length !== 1) throw new UsageError(`--to takes one status, not ${statuses.length}`);
    const status = statuses[0]!;
    sandboxRoute(ctx, env, 'sandbox_advance', '-'); // a stored path that is unusable: exit 2 before any request
    const { visitId, referral } = await visitOf(ctx, target);
    const route = sandboxRoute(ctx, env, 'sandbox_advance', visitId);
    const res = await sendSandbox(
      ctx,
      route,
      { status },
      {
        dryRun: Boolean(opts.dryRun),
        // A visit read from its referral exists: then a 404 is the path's.
        alsoMissing: referral
          ? { found: `Visit ${visitId} (of referral ${clean(referral.reference ?? referral.id)})` }
          : `there is no visit ${visitId} on ${env}`,
      },
    );
    if (!res) return 0;
    if (format === 'json') {
      await writeAnswer(ctx, res);
      return 0;
    }
    // The answer's shape is not published: the previous status and the referral, when it gives them.
    const answer = res.data as { changes?: { status?: unknown }; referral_id?: unknown } | null;
    const change = answer?.changes?.status;
    const from = Array.isArray(change) && typeof change[0] === 'string' ? `${change[0]} → ` : '';
    const named = referral?.reference ?? (await referenceOf(ctx, answer?.referral_id));
    const of = named ? ` (referral ${named})` : '';
    ctx.out.line(safe`Visit ${clean(visitId)}${clean(of)}: ${clean(from)}${clean(status)}`);
    ctx.note(
      "The sandbox sends visit.status_changed to your group's webhook URL; imaging webhook listen shows it.",
    );
    return 0;
  },
});

/**
 * A referral's reference by its id (one read), for people; its id when the read fails or is no answer
 * to use (the advance itself has succeeded, so that read's failure is no failure of the command).
 */
async function referenceOf(ctx: Context, id: unknown): Promise<string> {
  if (typeof id !== 'string' || !isUuid(id)) return typeof id === 'string' ? id : '';
  try {
    const ref = (await getReferral(ctx.api(), normaliseUuid(id))).data?.reference;
    return typeof ref === 'string' && ref !== '' ? ref : id;
  } catch (err) {
    if (err instanceof InterruptedError) throw err;
    return id;
  }
}

/**
 * The visit meant: a UUID that is a referral's id (read first) or else a visit's; a reference through
 * the list. A referral must have exactly one visit; several are listed, exit 2.
 */
async function visitOf(ctx: Context, typed: string): Promise<{ visitId: string; referral?: Referral }> {
  const t = typed.trim();
  let referral: Referral | undefined;
  if (isUuid(t)) {
    const id = normaliseUuid(t);
    try {
      referral = (await getReferral(ctx.api(), id)).data;
    } catch (err) {
      // No referral has this id: it is taken as a visit's (a wrong one is the advance's own 404).
      if (err instanceof ApiError && err.status === 404) return { visitId: id };
      throw err;
    }
  } else {
    const found = await resolveReferral(ctx, t);
    referral = found.referral?.visits ? found.referral : (await getReferral(ctx.api(), found.id)).data;
  }
  const visits = readingAnswer(undefined, () => {
    const v = (referral as { visits?: unknown } | null)?.visits;
    if (!Array.isArray(v))
      throw new UnreadableAnswerError(`the referral's visits are ${kindOf(v)}, not a list`);
    return v as Referral['visits'];
  });
  const name = clean(referral?.reference ?? referral?.id ?? t);
  if (visits.length === 1 && typeof visits[0]?.id === 'string') return { visitId: visits[0].id, referral };
  if (visits.length === 0)
    throw new UsageError(
      `referral ${name} has no visit to advance`,
      'Make one with imaging sandbox fixture.',
    );
  const lines = visits.map((v) => `  ${clean(v?.id)}  ${clean(v?.modality)}  ${clean(v?.status)}`);
  throw new UsageError(
    `referral ${name} has ${visits.length} visits: name the one to advance by its visit id`,
    `Its visits:\n${lines.join('\n')}`,
  );
}
