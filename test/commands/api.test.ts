import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, piped } from '../fake-io.js';
import { mockFixture } from '../helpers.js';

const fx = mockFixture({ referrals: 60 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('imaging api', () => {
  it('prints the answer as indented JSON, the same on a terminal and in a pipe', async () => {
    const { terminal, piped: p } = await bothForms(['api', '/modalities'], { env: fx.env() });
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
    }
    expect(hasEscapes(p.stdout)).toBe(false);
    const body = JSON.parse(p.stdout);
    expect(body.map((m: { name: string }) => m.name)).toContain('MRI');
    expect(p.stdout).toBe(`${JSON.stringify(body, null, 2)}\n`);
    expect(JSON.parse(terminal.stdout)).toEqual(body);
    expect(fx.apiRequests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v2/modalities',
      'GET /api/v2/modalities',
    ]);
  });

  it('--paginate follows every page into one array', async () => {
    const r = await piped(['api', '/referrals?per_page=25', '--paginate'], { env: fx.env() });
    expect(r.code).toBe(0);
    const all = JSON.parse(r.stdout);
    expect(all).toHaveLength(60);
    expect(fx.apiRequests()).toHaveLength(3);
  });

  it("sends fields as a JSON body, and the server's errors keep the contract's exit codes", async () => {
    const rejected = await piped(['api', 'POST', '/law_firms', '-F', 'name=Zed'], { env: fx.env() });
    expect(rejected.code).toBe(7);
    expect(rejected.stdout).toBe('');
    expect(rejected.stderr).toMatch(/^error: .*\n {2}status: {5}422 Unprocessable Entity\n/);
    const missing = await piped(['api', '/nope'], { env: fx.env() });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('status:     404 Not Found');
  });

  it('refuses a bad method, --paginate on a write, or a malformed field, before any request', async () => {
    const seen = () => fx.apiRequests().length;
    expectUsageError(
      await piped(['api', 'FETCH', '/modalities'], { env: fx.env() }),
      /unknown HTTP method "FETCH"/,
      seen(),
    );
    expectUsageError(
      await piped(['api', 'POST', '/law_firms', '--paginate'], { env: fx.env() }),
      /--paginate works with GET only/,
      seen(),
    );
    expectUsageError(
      await piped(['api', 'POST', '/law_firms', '-F', 'a[b=1'], { env: fx.env() }),
      /field name "a\[b"/,
      seen(),
    );
    expectUsageError(await piped(['api'], { env: fx.env() }), /missing required argument/, seen());
  });
});
