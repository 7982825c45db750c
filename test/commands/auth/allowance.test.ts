import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, piped, plain, widest } from '../../fake-io.js';
import { mockFixture, run } from '../../helpers.js';
import '../../reliability.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

let n = 0;
/** The emulator standing in for the sandbox, with a fresh token (its own meter) per test. */
const sandbox = () =>
  fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: `mock-allowance-${process.pid}-${++n}` });
const NOTE =
  'Counted on this machine only (2,000 successful requests or 7 days per sandbox token). If the token was also used elsewhere: imaging auth allowance --used N --since DATE\n';

describe('imaging auth allowance', () => {
  it('shows the requests counted for the sandbox token, in both forms, without a request of its own', async () => {
    const env = sandbox();
    await piped(['modalities', '--no-cache'], { env });
    await piped(['cpt', '73721', '--no-cache'], { env });
    fx.reset();
    const { terminal, piped: p } = await bothForms(['auth', 'allowance'], { env });
    expect(fx.apiRequests()).toHaveLength(0);
    expect(terminal.code).toBe(0);
    expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    expect(plain(terminal.stdout)).toMatch(
      /^Sandbox allowance: ≈2 of 2,000 requests used \(counted on this machine\)/,
    );
    expect(terminal.stderr).toBe(NOTE);
    expect(p.code).toBe(0);
    expect(hasEscapes(p.stdout)).toBe(false);
    expect(p.stdout).toMatch(
      /^Sandbox allowance: ≈2 of 2,000 requests used \(counted on this machine\), window ends ≈ \d{4}-\d\d-\d\d \d\d:\d\d UTC\nFirst request: /,
    );
    expect(p.stderr).toBe(NOTE);
  });

  it('--used corrects the count, and --json gives it to scripts', async () => {
    const env = sandbox();
    const set = await piped(['auth', 'allowance', '--used', '1900'], { env });
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/≈1,900 of 2,000/);
    const json = JSON.parse((await piped(['auth', 'allowance', '--json'], { env })).stdout);
    expect(json).toMatchObject({ used: 1900, limit: 2000, exhausted: false, expired: false });
  });

  it('refuses a count past the allowance, and any environment but the sandbox', async () => {
    const over = await piped(['auth', 'allowance', '--used', '5000'], { env: sandbox() });
    expectUsageError(
      over,
      /--used: 5,000 is more than a sandbox token allows \(2,000 successful requests\)/,
      0,
    );
    const local = await piped(['auth', 'allowance'], { env: fx.env() });
    expectUsageError(
      local,
      /the allowance meter counts sandbox tokens only \(the environment is local, from IMAGING_ENV\)/,
      0,
    );
    expect(local.stderr).toContain('hint: Use --env sandbox.');
    expectUsageError(
      await piped(['auth', 'allowance', '--since', 'yesterday'], { env: sandbox() }),
      /--since/,
      0,
    );
  });
});

describe('auth allowance --used: within the allowance, and a window start it cannot know', () => {
  /**
   * The sandbox allowance meter, against the emulator standing in for a sandbox:
   * `IMAGING_ENV=sandbox` with the emulator's URL as the base URL and an IMAGING_TOKEN (the
   * environment's name decides whether requests are counted; `--env local` is never metered). The
   * emulator's own request log is the oracle: the meter must count exactly its 2xx answers.
   */

  const fx = mockFixture({ referrals: 300 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  beforeEach(() => fx.reset());

  let n = 0;

  /** A fresh sandbox token per test: its own meter key and its own emulator allowance. */
  const sandbox = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    ...fx.env(),
    IMAGING_ENV: 'sandbox',
    IMAGING_TOKEN: `mock-meter-${process.pid}-${++n}`,
    ...extra,
  });

  async function meter(env: NodeJS.ProcessEnv) {
    const r = await run(['auth', 'allowance', '--json'], { env });
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as {
      used: number;
      limit: number;
      since: string | null;
      ends: string | null;
      exhausted: boolean;
      expired: boolean;
    };
  }

  it.each([
    ['2026-02-30', /is not a date/],
    ['2026-11-31', /is not a date/],
    ['1969-12-31', /is before 2000/],
    ['0001-01-01', /is before 2000/],
  ])('--since %s is a usage error, nothing written', async (since, message) => {
    const env = sandbox();
    const r = await run(['auth', 'allowance', '--since', since], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect((await meter(env)).since).toBeNull();
  });

  it('--used above 2,000 is a usage error (exit 2), nothing written', async () => {
    const env = sandbox();
    const r = await run(['auth', 'allowance', '--used', '2500'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'error: --used: 2,500 is more than a sandbox token allows (2,000 successful requests)',
    );
    expect(r.stdout).toBe('');
    expect((await meter(env)).used).toBe(0);
    expect((await run(['auth', 'allowance', '--used', '2000'], { env })).code).toBe(0);
  });

  it('--used without --since and no success counted: the window start is unknown, not "not started"', async () => {
    const env = sandbox();
    const r = await run(['auth', 'allowance', '--used', '350'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      '≈350 of 2,000 requests used (counted on this machine), window start not known (give it with: imaging auth allowance --since DATE)',
    );
    expect(r.stdout).not.toContain('not started');
    const fresh = await run(['auth', 'allowance'], { env: sandbox() });
    expect(fresh.stdout).toContain('window not started (no success counted yet)');
  });
});
