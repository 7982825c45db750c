import { InterruptedError } from '../errors.js';
import { sleep as sleepFor } from '../util/timer.js';

/** The retry policy, as data: the client only asks `decide`. */
export const RETRY_POLICY = {
  /** Only idempotent requests are ever sent twice: a POST that timed out may have been done. */
  methods: ['GET', 'HEAD'],
  statuses: [500, 502, 503, 504],
  /** A 429 is retried only with a Retry-After: the sandbox's weekly allowance is a 429 too. */
  rateLimit: { status: 429, except: ['sandbox_request_limit_reached'], needsRetryAfter: true },
  network: [
    'ECONNREFUSED',
    'ECONNRESET',
    'EPIPE',
    'ETIMEDOUT',
    'EAI_AGAIN',
    'ENETUNREACH',
    'EHOSTUNREACH',
    'UND_ERR_SOCKET',
    'ERR_STREAM_PREMATURE_CLOSE',
    'HPE_INVALID_CONSTANT',
  ],
  timeout: true,
  malformedBody: true,
  attempts: 3,
  baseDelayMs: 300,
  maxRetryAfterMs: 60_000,
  /**
   * The longest Retry-After a command that waits between reads anyway (watch) honours; beyond it the
   * command ends with exit 6, naming when to try again, rather than a hidden wait of days.
   */
  longestWaitMs: 3_600_000,
} as const;

export interface RetryPolicy {
  methods: readonly string[];
  statuses: readonly number[];
  rateLimit: { status: number; except: readonly string[]; needsRetryAfter: boolean };
  network: readonly string[];
  timeout: boolean;
  malformedBody: boolean;
  attempts: number;
  baseDelayMs: number;
  maxRetryAfterMs: number;
  longestWaitMs: number;
}

export type Outcome =
  | { kind: 'status'; status: number; code?: string | undefined; retryAfterMs?: number | undefined }
  | { kind: 'network'; code: string | undefined; message: string }
  | { kind: 'timeout'; message: string }
  | { kind: 'malformed' };

export interface Decision {
  retry: boolean;
  delayMs: number;
  why: string;
}

export function retries(policy: RetryPolicy, method: string, asked = true): boolean {
  return asked && policy.methods.includes(method.toUpperCase());
}

/** After send number `attempt` (from 1) ended with `outcome`: send again, and when. */
export function decide(
  attempt: number,
  outcome: Outcome,
  policy: RetryPolicy = RETRY_POLICY,
  random: () => number = Math.random,
): Decision {
  const why = describe(outcome);
  const stop = { retry: false, delayMs: 0, why };
  if (attempt >= policy.attempts) return stop;
  let retryAfterMs: number | undefined;
  switch (outcome.kind) {
    case 'network':
      if (outcome.code === undefined || !policy.network.includes(outcome.code)) return stop;
      break;
    case 'timeout':
      if (!policy.timeout) return stop;
      break;
    case 'malformed':
      if (!policy.malformedBody) return stop;
      break;
    case 'status': {
      retryAfterMs = outcome.retryAfterMs;
      const rl = policy.rateLimit;
      const rateLimited =
        outcome.status === rl.status &&
        !(outcome.code !== undefined && rl.except.includes(outcome.code)) &&
        (!rl.needsRetryAfter || retryAfterMs !== undefined);
      if (!policy.statuses.includes(outcome.status) && !rateLimited) return stop;
      if (retryAfterMs !== undefined && retryAfterMs > policy.maxRetryAfterMs) return stop;
      break;
    }
  }
  return { retry: true, delayMs: retryAfterMs ?? backoffMs(attempt, policy, random), why };
}

/** base × 2^(attempt-1) with equal jitter, so that retries from many clients spread out. */
export function backoffMs(attempt: number, policy: RetryPolicy = RETRY_POLICY, random = Math.random): number {
  const exp = policy.baseDelayMs * 2 ** (attempt - 1);
  return Math.round(exp / 2 + random() * (exp / 2));
}

function describe(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'status':
      return `HTTP ${outcome.status}`;
    case 'network':
    case 'timeout':
      return outcome.message;
    case 'malformed':
      return 'malformed response body';
  }
}

/** A pause of any length (in steps Node's timers can hold); InterruptedError once `signal` aborts. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw new InterruptedError();
  try {
    await sleepFor(ms, signal);
  } catch {
    throw new InterruptedError();
  }
}
