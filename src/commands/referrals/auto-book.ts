import { requireHttpUrl } from '../../cli/args.js';
import { defineCommand } from '../../cli/define.js';
import { duration, formatDuration } from '../../cli/duration.js';
import { arg, choice, flag, int, text } from '../../cli/options.js';
import { envArg } from '../../config/environments.js';
import { operationRoute, sendOperation } from '../../config/operations.js';
import type { Context } from '../../context.js';
import { ApiError, ExitCode, notEnabledHint, UsageError } from '../../errors.js';
import { safe } from '../../output/text.js';
import { writeJson } from '../../output/write.js';
import {
  describeRequest,
  RADIUS,
  reportOutcome,
  requestOf,
  STRATEGIES,
  type Strategy,
  submittedAt,
  waitForOutcome,
} from '../../referrals/auto-book.js';
import { approveWrite, beginWrite } from '../../referrals/confirm.js';
import { resolveReferral } from '../../referrals/resolve.js';
import { nearest } from '../../util/suggest.js';

const DEFAULT_WITHIN_MS = 10 * 60_000;

const options = {
  strategy: choice('--strategy <strategy>', STRATEGIES, 'closest, soonest or closest_soonest (required)', {
    parse: (value) => {
      const v = value.trim().toLowerCase().replace(/-/g, '_');
      if ((STRATEGIES as readonly string[]).includes(v)) return v as Strategy;
      const near = nearest(v, STRATEGIES, (w) => Math.max(2, Math.floor(w.length / 3)));
      throw new UsageError(
        `--strategy: unknown strategy "${value}"`,
        `${near ? `Did you mean ${near}? ` : ''}Use one of: ${STRATEGIES.join(', ')}.`,
      );
    },
  }),
  radius: int(
    '--radius <n>',
    `how far from the address to look, ${RADIUS.min} to ${RADIUS.max}, in the API's unit (required)`,
    {
      max: RADIUS.max,
    },
  ),
  address: text('--address <text>', "where to search from (default: the patient's address)"),
  webhookUrl: text(
    '--webhook-url <url>',
    'send referral.auto_book_completed here instead of the group webhook (unsigned, by the spec)',
  ),
  wait: flag('--wait', 'read the referral until the attempt completes, and exit by its outcome'),
  within: duration('--within <duration>', 'with --wait: give up after this long, exit 9 (default 10m)'),
  dryRun: flag('--dry-run', 'show the request and send nothing that books'),
};

export default defineCommand({
  path: ['referrals', 'auto-book'],
  formats: ['table', 'json'],
  description: `Submits an auto-book request, { "auto_book_request": { "strategy", "radius", "address", "webhook_url" } } with only those given, checked first (radius ${RADIUS.min} to ${RADIUS.max}). The service books asynchronously: --wait reads the referral (one request each read, every 2s growing to 15s) until its auto_book_request is completed, then exits 0 for booked or contacted_for_booking, 10 for no_availability or booking_failed, 9 when --within passes first. Auto-book is enabled per account (403 endpoint_not_enabled until then). The submission's path and body are not published: the default is POST /api/v2/referrals/{id}/auto_book; set the real one per environment with imaging config set path.auto_book '[METHOD] /api/v2/…/{id}/…'. In production it asks first (--yes to confirm without a terminal).`,
  args: [arg('<id>', 'ID or reference')],
  options,
  examples: [
    'imaging referrals auto-book ID --strategy closest --radius 25 --dry-run',
    'imaging referrals auto-book R-240003 --strategy soonest --radius 50 --wait --within 5m',
    "imaging referrals auto-book R-240005 --strategy closest_soonest --radius 10 --address '350 5th Ave, New York, NY' --json",
  ],
  async run(ctx, [id], opts) {
    const format = ctx.format('table');
    const body = requestBody(opts);
    const { env, client } = beginWrite(ctx, 'auto_book', 'an auto-book request', opts);
    if (opts.webhookUrl)
      ctx.note(
        'Note: referral.auto_book_completed sent to --webhook-url arrives unsigned, by the spec\'s design (only the group webhook is signed); "imaging webhook verify --allow-unsigned" accepts exactly that delivery.',
      );
    const resolved = await resolveReferral(ctx, id);
    const name = resolved.reference ?? resolved.id;
    const route = operationRoute(ctx.config, env, 'auto_book', resolved.id);
    const stop = await approveWrite(
      ctx,
      { format, route, body, dryRun: opts.dryRun },
      `Auto-book referral ${name}`,
    );
    if (stop !== undefined) return stop;
    const sentAt = Date.now();
    const res = await sendOperation<unknown>(
      client,
      route,
      body,
      // A reference was found by a read; an id was taken as given and may name no referral.
      resolved.reference ? { found: `Referral ${name}` } : `there is no referral ${resolved.id} on ${env}`,
    ).catch((err: unknown) => {
      throw forbidden(err, env);
    });
    const submitted = requestOf(res.data);
    if (!opts.wait) return reportSubmitted(ctx, format === 'json', res.data, name);
    ctx.note(
      safe`Submitted${submitted ? `: ${describeRequest(submitted)}` : ''}; waiting for the outcome, up to ${formatDuration(opts.within ?? DEFAULT_WITHIN_MS)}. Ctrl-C stops waiting; the request goes on.`,
    );
    const done = await waitForOutcome(ctx, {
      referralId: resolved.id,
      name,
      requestId: submitted?.id,
      since: submittedAt(headerText(res.headers.date), sentAt),
      withinMs: opts.within ?? DEFAULT_WITHIN_MS,
    });
    return reportOutcome(ctx, done, name, format === 'json');
  },
});

interface Given {
  strategy?: Strategy | undefined;
  radius?: number | undefined;
  address?: string | undefined;
  webhookUrl?: string | undefined;
  wait?: boolean | undefined;
  within?: number | undefined;
}

/** The body, every flag checked before any request: strategy and radius required, the URL a URL. */
function requestBody(opts: Given): { auto_book_request: Record<string, unknown> } {
  if (!opts.strategy) throw new UsageError('--strategy is required', `Use one of: ${STRATEGIES.join(', ')}.`);
  if (opts.radius === undefined)
    throw new UsageError('--radius is required', `Give the search radius, ${RADIUS.min} to ${RADIUS.max}.`);
  if (opts.within !== undefined && !opts.wait)
    throw new UsageError('--within goes with --wait', 'Add --wait to wait for the outcome.');
  if (opts.address !== undefined && opts.address.trim() === '')
    throw new UsageError('--address is empty', "Leave it out to search from the patient's address.");
  const request: Record<string, unknown> = { strategy: opts.strategy, radius: opts.radius };
  if (opts.address !== undefined) request.address = opts.address.trim();
  if (opts.webhookUrl !== undefined)
    request.webhook_url = requireHttpUrl('--webhook-url', opts.webhookUrl).href;
  return { auto_book_request: request };
}

const headerText = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** A 403: auto-book is enabled per account. */
function forbidden(err: unknown, env: string): unknown {
  if (!(err instanceof ApiError) || err.status !== 403) return err;
  return new ApiError(
    err.details,
    notEnabledHint({
      what: 'Auto-book ("auto-book submission" in the API)',
      name: 'auto-book',
      others: 'payment and notification reads and FHIR',
      env,
    }),
  );
}

/** Without --wait: what the service accepted, and how to see the outcome later. */
function reportSubmitted(ctx: Context, json: boolean, data: unknown, name: string): number {
  const r = requestOf(data);
  if (json) writeJson(ctx.sink(), r ?? data ?? null);
  else ctx.out.line(safe`Auto-book of ${name} submitted: ${r ? describeRequest(r) : 'accepted'}.`);
  ctx.note(
    `See the outcome with: imaging referrals get ${name}${envArg(ctx.environment().value)} --fields auto_book_request (or add --wait)`,
  );
  return ExitCode.ok;
}
