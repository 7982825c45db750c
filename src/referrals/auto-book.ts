import { sleep } from '../api/retry.js';
import type { AutoBookRequest } from '../api/types.js';
import { formatDuration } from '../cli/duration.js';
import { envArg } from '../config/environments.js';
import type { Context } from '../context.js';
import { CliError, ExitCode } from '../errors.js';
import { clean, safe } from '../output/text.js';
import { writeJson } from '../output/write.js';
import { peopleTime } from '../util/time.js';
import { fetchReferral } from './fetch.js';

export const STRATEGIES = ['closest', 'soonest', 'closest_soonest'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** The spec's limits on the radius (an integer; the spec names no unit). */
export const RADIUS = { min: 1, max: 250 } as const;

/** Outcomes the booking is made in (exit 0), and those after which it will not be (exit 10). */
const BOOKED = ['booked', 'contacted_for_booking'];
export const NOT_BOOKED = ['no_availability', 'booking_failed'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The auto-book request in a submission's answer: `{ auto_book_request }`, the request, or a referral holding it. */
export function requestOf(data: unknown): AutoBookRequest | undefined {
  const r = isObj(data) && isObj(data.auto_book_request) ? data.auto_book_request : data;
  return isObj(r) && typeof r.status === 'string' ? (r as unknown as AutoBookRequest) : undefined;
}

/** One line for people: "processing (closest, 25 mi)" or "completed: booked". */
export function describeRequest(r: AutoBookRequest): string {
  if (r.status === 'completed') return `completed: ${clean(r.outcome ?? 'no outcome given')}`;
  return `${clean(r.status)} (${clean(r.strategy)}, radius ${clean(r.radius)})`;
}

export interface WaitOptions {
  referralId: string;
  /** Shown in messages: the reference, else the id. */
  name: string;
  /** The submitted request's id, when the answer gave one: an older request's outcome is not this one's. */
  requestId: string | undefined;
  /**
   * Without an id: when the submission was made, on the server's clock (epoch ms). A request the
   * referral shows as created or completed before it is an earlier one, not this one.
   */
  since: number;
  withinMs: number;
}

/** Time between two reads: against the emulator a tenth of a second; elsewhere 2s, growing to 15s. */
function intervals(ctx: Context): () => number {
  if (ctx.environment().value === 'local') return () => 100;
  let next = 2000;
  return () => {
    const now = next;
    next = Math.min(15_000, Math.round(next * 1.5));
    return now;
  };
}

/**
 * Reads the referral until its auto_book_request (this one) is completed, and returns it; exit 9 when
 * `withinMs` passes first. Each read is one GET of the referral.
 */
export async function waitForOutcome(ctx: Context, opts: WaitOptions): Promise<AutoBookRequest> {
  const deadline = Date.now() + opts.withinMs;
  const pause = intervals(ctx);
  let saidOther = false;
  ctx.interruptNote = `Stopped waiting; the auto-book request goes on. See its outcome with: imaging referrals get ${opts.name}${envArg(ctx.environment().value)} --fields auto_book_request`;
  for (;;) {
    const referral = (await fetchReferral(ctx, opts.referralId)).data;
    const r = isObj(referral) ? requestOf(referral.auto_book_request) : undefined;
    const ours = r && (opts.requestId ? r.id === opts.requestId : !earlier(r, opts.since));
    if (r && !ours && !saidOther) {
      saidOther = true;
      ctx.note(
        opts.requestId
          ? safe`Note: the referral shows another auto-book request (${r.id}, ${r.status}); still waiting for this one (${opts.requestId}).`
          : safe`Note: the referral still shows an earlier auto-book request (${describeRequest(r)}${r.completed_at ? `, ${peopleTime(r.completed_at, { timeZone: ctx.env.TZ || undefined })}` : ''}); waiting for this one.`,
      );
    }
    if (r && ours && r.status === 'completed') return r;
    const left = deadline - Date.now();
    if (left <= 0)
      throw new CliError(
        `not yet: the auto-book request of ${opts.name} is still ${r && ours ? clean(r.status) : 'not shown on the referral'} after ${formatDuration(opts.withinMs)}`,
        ExitCode.notYet,
        `The request goes on without this tool. See its outcome later with: imaging referrals get ${opts.name}${envArg(ctx.environment().value)} --fields auto_book_request`,
      );
    await sleep(Math.min(pause(), left), ctx.signal);
  }
}

/** Whether `r` was created or completed before `since` (server clock): an earlier request, not the one sent. */
function earlier(r: AutoBookRequest, since: number): boolean {
  const created = Date.parse(String((r as { created_at?: unknown }).created_at ?? ''));
  const completed = Date.parse(String(r.completed_at ?? ''));
  return created < since || completed < since;
}

/** Clock skew allowed when the server gave no Date header and the submission time is this machine's. */
const SKEW_MS = 2 * 60_000;
/** The server stamps its Date when it answers: the request may have been created (or done) before. */
const ANSWER_MS = 5_000;

/**
 * When a submission was made, on the server's clock: its answer's Date header less the time an answer
 * may take, else this machine's clock at sending less the allowed skew.
 */
export function submittedAt(dateHeader: string | undefined, sentAt: number): number {
  const server = dateHeader ? Date.parse(dateHeader) : Number.NaN;
  return Number.isNaN(server) ? sentAt - SKEW_MS : server - ANSWER_MS;
}

/** The completed request, for people or as JSON; the exit code its outcome gives. */
export function reportOutcome(ctx: Context, r: AutoBookRequest, name: string, json: boolean): number {
  const outcome = r.outcome ?? '';
  if (json) writeJson(ctx.sink(), r);
  else
    ctx.out.line(
      safe`Auto-book of ${name}: ${outcome || 'completed without an outcome'}${r.completed_at ? ` (completed ${peopleTime(r.completed_at, { timeZone: ctx.env.TZ || undefined })})` : ''}.`,
    );
  if (BOOKED.includes(outcome)) return ExitCode.ok;
  if (NOT_BOOKED.includes(outcome)) {
    ctx.note(
      safe`error: the auto-book of ${name} ended with ${outcome}${r.error ? `: ${r.error}` : ''}; it will not book this request.`,
    );
    ctx.note(
      'hint: Try another strategy or a wider --radius, or book through the portal (imaging sso --open).',
    );
    return ExitCode.cannotHappen;
  }
  // Neither booked nor refused as far as this tool can tell: a script must not take it for either.
  ctx.note(
    safe`error: ${outcome ? `"${outcome}" is an outcome this tool does not know` : 'the server gave no outcome'}; check the referral: imaging referrals get ${name}${envArg(ctx.environment().value)}`,
  );
  return ExitCode.failure;
}
