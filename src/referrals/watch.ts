import { getReferral } from '../api/endpoints/referrals.js';
import { RETRY_POLICY, sleep } from '../api/retry.js';
import type { Referral } from '../api/types.js';
import type { Context } from '../context.js';
import {
  ApiError,
  InterruptedError,
  NetworkError,
  NotJsonError,
  TimeoutError,
  UnreadableAnswerError,
} from '../errors.js';
import { clean } from '../output/text.js';
import { type Standing, standing } from './progress.js';

// The polling of `referrals watch`: each referral is read once an interval until it is done or cannot get
// there; what changed between two reads is handed to the view. A failed read (network, 5xx, 429) is shown
// and tried again at the next interval, never fatal; so is an answer that cannot be read (not JSON, or
// not the referral asked for), which a proxy or a server in trouble sends for a while.

/** A referral to watch: its id, and the list's snapshot when a reference was resolved through the list. */
export interface WatchTarget {
  id: string;
  reference?: string | undefined;
  referral?: Referral | undefined;
}

export interface VisitState {
  id: string;
  /** Its place in the referral's visits, from 1. */
  n: number;
  modality: string | null;
  status: string;
}

export interface Watched {
  id: string;
  reference: string | undefined;
  patient: string | undefined;
  visits: VisitState[];
  /** Undefined until the referral has been read once. */
  standing: Standing | undefined;
  changedAt: Date | undefined;
  /** Why the last read failed, until one succeeds. */
  problem: string | undefined;
}

export interface Change {
  at: Date;
  watched: Watched;
  visit: VisitState;
  previous: string | null;
}

export interface WatchHooks {
  /** Before the first read: the referrals, whose state the watch keeps up to date. */
  start(all: Watched[]): void;
  change(change: Change): void;
  /** The referral is done, or cannot get there. */
  finished(watched: Watched): void;
  /** A round of reads is over: `failed` were not read (each keeps its `problem`). */
  polled(failed: Watched[]): void;
  /** Waiting for the next round, due at `next` (ms since the epoch), or for the end at `end`. */
  waiting(next: number | undefined): void;
}

export interface WatchOptions {
  until: ReadonlySet<string>;
  intervalMs: number;
  /** When the watch gives up (ms since the epoch); none: until every referral is finished. */
  deadline: number | undefined;
  concurrency: number;
}

export const isFinished = (w: Watched) => w.standing === 'done' || w.standing === 'cannot';

/** Watches until every referral is finished or the deadline passes; returns the last state of each. */
export async function watchReferrals(
  ctx: Context,
  targets: readonly WatchTarget[],
  opts: WatchOptions,
  hooks: WatchHooks,
): Promise<Watched[]> {
  const all = targets.map(
    (t): Watched => ({
      id: t.id,
      reference: t.reference,
      patient: undefined,
      visits: [],
      standing: undefined,
      changedAt: undefined,
      problem: undefined,
    }),
  );
  hooks.start(all);
  const client = ctx.api();
  const read = (w: Watched, r: Referral) => observe(w, r, opts.until, ctx.now(), hooks);
  // A snapshot from the list is the first read: it costs no request of its own.
  const fresh = new Set<Watched>();
  targets.forEach((t, i) => {
    if (t.referral) {
      read(all[i]!, t.referral);
      fresh.add(all[i]!);
    }
  });
  // After a round in which nothing could be read, the next waits longer (twice, up to 4 intervals), and
  // never less than a Retry-After the server gave.
  let idle = 0;
  for (;;) {
    const started = Date.now();
    let retryAfterMs = 0;
    const due = all.filter((w) => !isFinished(w) && !fresh.has(w));
    fresh.clear();
    const failed: Watched[] = [];
    await eachLimited(due, opts.concurrency, async (w) => {
      try {
        const res = await getReferral(client, w.id);
        checkSameReferral(w.id, res.data, res.requestId);
        w.problem = undefined;
        read(w, res.data);
      } catch (err) {
        const problem = passing(err);
        if (problem === undefined || ctx.signal.aborted) throw err;
        const askedMs = err instanceof ApiError ? (err.details.retryAfterSeconds ?? 0) * 1000 : 0;
        // A server asking for a longer pause than any watch waits ends it (exit 6, naming when).
        if (askedMs > RETRY_POLICY.longestWaitMs) throw err;
        w.problem = problem;
        failed.push(w);
        retryAfterMs = Math.max(retryAfterMs, askedMs);
      }
    });
    hooks.polled(failed);
    if (all.every(isFinished)) return all;
    const now = Date.now();
    if (opts.deadline !== undefined && now >= opts.deadline) return all;
    idle = due.length > 0 && failed.length === due.length ? Math.min(idle + 1, 2) : 0;
    const next = Math.max(started + opts.intervalMs * 2 ** idle, now + retryAfterMs);
    if (opts.deadline !== undefined && next > opts.deadline) {
      hooks.waiting(undefined);
      await sleep(opts.deadline - now, ctx.signal);
      return all;
    }
    hooks.waiting(next);
    await sleep(Math.max(0, next - now), ctx.signal);
  }
}

/** Reads one answer into `w`, telling the hooks what changed since the last one. */
function observe(w: Watched, r: Referral, until: ReadonlySet<string>, at: Date, hooks: WatchHooks): void {
  const visits = (Array.isArray(r?.visits) ? r.visits : []).map(
    (v, i): VisitState => ({
      id: String(v?.id ?? i + 1),
      n: i + 1,
      modality: typeof v?.modality === 'string' ? v.modality : null,
      status: typeof v?.status === 'string' ? v.status : '',
    }),
  );
  const first = w.standing === undefined;
  if (typeof r?.reference === 'string') w.reference = r.reference;
  w.patient = patientName(r);
  if (!first) {
    const before = new Map(w.visits.map((v) => [v.id, v.status]));
    for (const v of visits) {
      const previous = before.get(v.id);
      if (previous === v.status) continue;
      w.changedAt = at;
      w.visits = visits;
      w.standing = standing(visits, until);
      hooks.change({ at, watched: w, visit: v, previous: previous ?? null });
    }
  }
  w.visits = visits;
  w.standing = standing(visits, until);
  if (isFinished(w)) hooks.finished(w);
}

function patientName(r: Referral): string | undefined {
  const p = r?.patient;
  if (!p || typeof p !== 'object') return undefined;
  const parts = [p.last_name, p.first_name].filter((x) => typeof x === 'string' && x !== '');
  if (parts.length > 0) return parts.join(', ');
  return typeof p.name === 'string' ? p.name : undefined;
}

/** The answer is the referral asked for: another one's state is never reported as this one's. */
function checkSameReferral(id: string, data: unknown, requestId: string | undefined): void {
  const got = typeof data === 'object' && data !== null ? (data as { id?: unknown }).id : undefined;
  const text = typeof got === 'string' || typeof got === 'number' ? String(got) : undefined;
  if (text !== undefined && text.toLowerCase() === id.toLowerCase()) return;
  const why =
    got === undefined
      ? 'the answer has no id'
      : text === undefined
        ? "the answer's id is not text"
        : `the answer is referral ${clean(text.slice(0, 80))}, not the one asked for`;
  throw new UnreadableAnswerError(`the referral ${clean(id)}: ${why}`, requestId);
}

/** Why a read failed, when the watch goes on past it (a drop, a timeout, 5xx, a rate limit); else undefined. */
function passing(err: unknown): string | undefined {
  if (err instanceof InterruptedError) return undefined;
  if (
    err instanceof NetworkError ||
    err instanceof TimeoutError ||
    err instanceof UnreadableAnswerError ||
    err instanceof NotJsonError
  )
    return err.message;
  if (err instanceof ApiError) {
    const { status, code } = err.details;
    if (status >= 500 || (status === 429 && code !== 'sandbox_request_limit_reached'))
      // A message naming the status already (an HTML page from a gateway) is said once.
      return err.message?.includes(`HTTP ${status}`)
        ? err.message
        : `HTTP ${status} ${err.message ?? ''}`.trim();
  }
  return undefined;
}

/** Runs `fn` over `items`, at most `limit` at once; the first error stops the rest and is thrown. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.err;
}
