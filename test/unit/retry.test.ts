import { describe, expect, it } from 'vitest';
import { backoffMs, decide, RETRY_POLICY, type RetryPolicy, retries } from '../../src/api/retry.js';

/** The retry policy as data: each rule of RETRY_POLICY, read back through `decide`. */

const half = () => 0.5;
const d = (attempt: number, outcome: Parameters<typeof decide>[1], policy: RetryPolicy = RETRY_POLICY) =>
  decide(attempt, outcome, policy, half);

describe('RETRY_POLICY', () => {
  it('states the policy as data', () => {
    expect(RETRY_POLICY).toMatchObject({
      methods: ['GET', 'HEAD'],
      statuses: [500, 502, 503, 504],
      rateLimit: { status: 429, except: ['sandbox_request_limit_reached'], needsRetryAfter: true },
      malformedBody: true,
      timeout: true,
      attempts: 3,
      baseDelayMs: 300,
      maxRetryAfterMs: 60_000,
    });
    expect(RETRY_POLICY.network).toEqual(expect.arrayContaining(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT']));
  });

  it('sends only its methods more than once, and none when the caller says no', () => {
    expect(retries(RETRY_POLICY, 'GET')).toBe(true);
    expect(retries(RETRY_POLICY, 'head')).toBe(true);
    expect(retries(RETRY_POLICY, 'POST')).toBe(false);
    expect(retries(RETRY_POLICY, 'DELETE')).toBe(false);
    expect(retries(RETRY_POLICY, 'GET', false)).toBe(false);
  });

  it.for(RETRY_POLICY.statuses)('retries HTTP %i, with equal jitter doubling per try', (status) => {
    expect(d(1, { kind: 'status', status })).toEqual({ retry: true, delayMs: 225, why: `HTTP ${status}` });
    expect(d(2, { kind: 'status', status }).delayMs).toBe(450);
  });

  it.for([400, 401, 403, 404, 409, 422, 501])('does not retry HTTP %i', (status) => {
    expect(d(1, { kind: 'status', status }).retry).toBe(false);
  });

  it('stops at the policy attempts, whatever the outcome', () => {
    for (const outcome of [
      { kind: 'status', status: 503 },
      { kind: 'malformed' },
      { kind: 'timeout', message: 't' },
      { kind: 'network', code: 'ECONNRESET', message: 'r' },
    ] as const) {
      expect(d(RETRY_POLICY.attempts - 1, outcome).retry).toBe(true);
      expect(d(RETRY_POLICY.attempts, outcome).retry).toBe(false);
    }
    expect(d(1, { kind: 'status', status: 503 }, { ...RETRY_POLICY, attempts: 1 }).retry).toBe(false);
  });

  it('a 429 is retried after its Retry-After, never without one, never for the sandbox allowance', () => {
    expect(d(1, { kind: 'status', status: 429, code: 'rate_limited', retryAfterMs: 1000 })).toEqual({
      retry: true,
      delayMs: 1000,
      why: 'HTTP 429',
    });
    expect(d(1, { kind: 'status', status: 429, code: 'rate_limited' }).retry).toBe(false);
    const quota = {
      kind: 'status',
      status: 429,
      code: 'sandbox_request_limit_reached',
      retryAfterMs: 1000,
    } as const;
    expect(d(1, quota).retry).toBe(false);
  });

  it('waits for a Retry-After up to maxRetryAfterMs, and gives up beyond it', () => {
    expect(d(1, { kind: 'status', status: 503, retryAfterMs: 60_000 })).toMatchObject({
      retry: true,
      delayMs: 60_000,
    });
    expect(d(1, { kind: 'status', status: 503, retryAfterMs: 60_001 }).retry).toBe(false);
  });

  it('retries the network codes it lists and timeouts; not others', () => {
    for (const code of RETRY_POLICY.network)
      expect(d(1, { kind: 'network', code, message: `m ${code}` })).toEqual({
        retry: true,
        delayMs: 225,
        why: `m ${code}`,
      });
    expect(d(1, { kind: 'network', code: 'ENOTFOUND', message: 'm' }).retry).toBe(false);
    expect(d(1, { kind: 'network', code: 'CERT_HAS_EXPIRED', message: 'm' }).retry).toBe(false);
    expect(d(1, { kind: 'network', code: undefined, message: 'm' }).retry).toBe(false);
    expect(d(1, { kind: 'timeout', message: 'timed out' })).toMatchObject({ retry: true, why: 'timed out' });
    expect(d(1, { kind: 'timeout', message: 't' }, { ...RETRY_POLICY, timeout: false }).retry).toBe(false);
  });

  it('retries a malformed body unless the policy says not to', () => {
    expect(d(1, { kind: 'malformed' })).toEqual({
      retry: true,
      delayMs: 225,
      why: 'malformed response body',
    });
    expect(d(1, { kind: 'malformed' }, { ...RETRY_POLICY, malformedBody: false }).retry).toBe(false);
  });

  it('a changed policy is followed: statuses, rate-limit exceptions, base delay', () => {
    const policy: RetryPolicy = {
      ...RETRY_POLICY,
      statuses: [503],
      rateLimit: { ...RETRY_POLICY.rateLimit, needsRetryAfter: false },
      baseDelayMs: 100,
    };
    expect(d(1, { kind: 'status', status: 500 }, policy).retry).toBe(false);
    expect(d(1, { kind: 'status', status: 429 }, policy)).toMatchObject({ retry: true, delayMs: 75 });
  });

  it('the back-off stays within [exp/2, exp] for any random draw', () => {
    for (const r of [0, 0.25, 0.999]) {
      for (let attempt = 1; attempt <= 4; attempt++) {
        const exp = RETRY_POLICY.baseDelayMs * 2 ** (attempt - 1);
        const ms = backoffMs(attempt, RETRY_POLICY, () => r);
        expect(ms).toBeGreaterThanOrEqual(exp / 2);
        expect(ms).toBeLessThanOrEqual(exp);
      }
    }
  });
});
