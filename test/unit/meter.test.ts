import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeView, leftOf, Meter, meterKey, readState, viewOf } from '../../src/meter/meter.js';
import { run, tempDir } from '../helpers.js';

const dir = tempDir();
afterAll(() => dir.cleanup());
const K = 'a'.repeat(32);

describe('the meter file, folded', () => {
  it('sums successes, applies corrections, and clears marks with a later success; skips what does not parse', () => {
    const file = join(dir.path, 'fold.log');
    writeFileSync(
      file,
      [
        `${K} s 3 1000 1200`,
        `${'b'.repeat(32)} s 50 900 900`, // another token
        `${K} s x 1 2`, // garbage
        `${K} bogus`,
        `${K} x 1300`, // exhausted after the last success
        '',
      ].join('\n'),
    );
    let v = viewOf(readState(file, K), 2000);
    expect(v).toMatchObject({ used: 3, exhausted: true, expired: false });
    expect(v.since).toBe(new Date(1000).toISOString());
    expect(leftOf(v)).toBe(0);
    writeFileSync(file, `${K} set 100 - 1400\n${K} s 2 1100 1350\n${K} s 1 1500 1500\n`, { flag: 'a' });
    v = viewOf(readState(file, K), 2000);
    // The batch that ended before the correction was already in the number given; the later one counts.
    expect(v).toMatchObject({ used: 101, exhausted: false });
    expect(leftOf(v)).toBe(1899);
    writeFileSync(file, `${K} e 1600\n`, { flag: 'a' });
    expect(viewOf(readState(file, K), 2000)).toMatchObject({ expired: true });
  });

  it('the 7-day window: ends a week after the first success, expired once passed', () => {
    const file = join(dir.path, 'window.log');
    writeFileSync(file, `${K} s 1 ${Date.UTC(2026, 10, 1)} ${Date.UTC(2026, 10, 1)}\n`);
    const state = readState(file, K);
    const inside = viewOf(state, Date.UTC(2026, 10, 7));
    expect(inside).toMatchObject({ expired: false, ends: '2026-11-08T00:00:00.000Z' });
    const after = viewOf(state, Date.UTC(2026, 10, 8) + 1);
    expect(after.expired).toBe(true);
    expect(describeView(after, Date.UTC(2026, 10, 9))).toBe(
      '≈1 of 2,000 requests used (counted on this machine), window ends ≈ 2026-11-08 00:00 UTC; the 7-day window has passed',
    );
    expect(describeView(viewOf(readState(join(dir.path, 'none'), K), 0))).toBe(
      '≈0 of 2,000 requests used (counted on this machine), window not started (no success counted yet)',
    );
  });

  it('the key is a hash of origin and token: neither can be read from it', () => {
    const k = meterKey('https://sandbox.example', 'tok-123456');
    expect(k).toMatch(/^[0-9a-f]{32}$/);
    expect(meterKey('https://other.example', 'tok-123456')).not.toBe(k);
    expect(meterKey('https://sandbox.example', 'tok-123457')).not.toBe(k);
  });

  it('a success is an increment: the file is written every 25 and at close, in one line each', () => {
    const file = join(dir.path, 'batch.log');
    let t = 5000;
    const m = new Meter(file, K, () => t++);
    for (let i = 0; i < 24; i++) m.answer(200, undefined);
    expect(readState(file, K).used).toBe(0);
    expect(m.view().used).toBe(24); // pending included
    m.answer(204, undefined);
    expect(readState(file, K).used).toBe(25);
    m.answer(404, 'not_found');
    m.answer(500, 'internal_error');
    m.answer(429, 'rate_limited'); // a rate, not the quota
    m.answer(200, undefined);
    expect(m.close()).toBeUndefined();
    expect(readState(file, K).used).toBe(26);
    expect(viewOf(readState(file, K), t).exhausted).toBe(false);
  });
});

describe('auth allowance against the clock', () => {
  it('a window that has passed shows as expired (the clock injected)', async () => {
    const env = {
      IMAGING_ENV: 'sandbox',
      IMAGING_BASE_URL: 'https://sandbox.example',
      IMAGING_TOKEN: 'tok-clock-test',
      IMAGING_CONFIG_DIR: dir.path,
    };
    const set = await run(['auth', 'allowance', '--used', '12', '--since', '2026-11-01T10:00:00Z'], {
      env,
      deps: { now: () => new Date(Date.UTC(2026, 10, 9)) },
    });
    expect(set.code).toBe(0);
    expect(set.stdout).toContain(
      '≈12 of 2,000 requests used (counted on this machine), window ends ≈ 2026-11-08 10:00 UTC; the 7-day window has passed',
    );
    const j = await run(['auth', 'allowance', '--json'], {
      env,
      deps: { now: () => new Date(Date.UTC(2026, 10, 5)) },
    });
    expect(JSON.parse(j.stdout)).toEqual({
      used: 12,
      limit: 2000,
      since: '2026-11-01T10:00:00.000Z',
      ends: '2026-11-08T10:00:00.000Z',
      exhausted: false,
      expired: false,
    });
  });
});
