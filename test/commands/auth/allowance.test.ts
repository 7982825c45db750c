import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, piped, plain, widest } from '../../fake-io.js';
import { mockFixture } from '../../helpers.js';

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
