import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RETRY_POLICY } from '../../src/api/retry.js';
import { parseFault } from '../../src/emulator/faults.js';
import { mockFixture, run, tempDir } from '../helpers.js';

/**
 * The export's ordered-concurrent walker holds pages as bytes and parses each at its turn. A page
 * found malformed then goes on under the one retry policy, counting the sends it already took: the
 * emulator's request log shows that no page is ever sent more than RETRY_POLICY.attempts times
 * (before, the walker started a fresh retrying request: 4 sends, or 6 after earlier 5xx).
 */

const fx = mockFixture({ referrals: 120 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  fx.reset();
  fx.mock.faults.clear();
  dir = tempDir();
});
afterEach(() => dir.cleanup());

const inject = (spec: string) => fx.mock.faults.add(parseFault(spec, '/api/v2/referrals'));
/** How many times the emulator was asked for each page of the referral list. */
const sendsPerPage = () => {
  const sends = new Map<number, number>();
  for (const r of fx.apiRequests()) {
    const u = new URL(r.path, 'http://x');
    if (u.pathname !== '/api/v2/referrals') continue;
    const page = Number(u.searchParams.get('page'));
    sends.set(page, (sends.get(page) ?? 0) + 1);
  }
  return sends;
};
const exportTo = (target: string, ...extra: string[]) =>
  run(
    ['referrals', 'export', '--format', 'ndjson', '-o', target, '--per-page', '10', '--verbose', ...extra],
    {
      env: fx.env({ IMAGING_TOKEN: 'mock-page-sends' }),
    },
  );

describe('a malformed page in the concurrent export walk', () => {
  it('cut short once: asked again once, and the export completes with every record', async () => {
    inject('truncated:1@1'); // page 1 whole, page 2's first answer cut short
    const target = join(dir.path, 'out.ndjson');
    const r = await exportTo(target);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(`\\* malformed response body; retrying in \\d+ ms \\(try 2 of ${RETRY_POLICY.attempts}\\)`),
    );
    expect(sendsPerPage().get(2)).toBe(2);
    const ids = readFileSync(target, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    expect(ids).toEqual(fx.mock.referrals.slice(0, 120).map((x) => x.id));
  });

  it('cut short every time: the page is sent the policy attempts, no more, and the export stops', async () => {
    inject('truncated:*@1');
    const target = join(dir.path, 'out.ndjson');
    const r = await exportTo(target);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the server's answer is not valid JSON (truncated or malformed JSON");
    const sends = sendsPerPage();
    expect(sends.get(2)).toBe(RETRY_POLICY.attempts);
    expect(Math.max(...sends.values())).toBe(RETRY_POLICY.attempts);
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('after two 5xx the third answer is cut short: the policy is spent, the page is not sent a fourth time', async () => {
    inject('500:2@1'); // page 2's first two sends
    inject('truncated:1@3'); // and its third
    const target = join(dir.path, 'out.ndjson');
    const r = await exportTo(target, '--concurrency', '1');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the server's answer is not valid JSON (truncated or malformed JSON");
    expect(r.stderr).toContain('(try 3 of 3)');
    expect(r.stderr).not.toContain('try 4');
    expect(sendsPerPage().get(2)).toBe(RETRY_POLICY.attempts);
    expect(readdirSync(dir.path)).toEqual([]);
  });
});
