import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectTableForms, expectUsageError, piped, plain } from '../../fake-io.js';
import { json, mockFixture, run, testServer } from '../../helpers.js';
import '../../reliability.js';
import { parse } from 'csv-parse/sync';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const ID = '3212c76a-c27e-4ca2-9e90-bb9c865c1630'; // R-240001 of the emulator's data

describe('imaging referrals payments', () => {
  it('lists the payments of a referral in both forms, the id left out at 80 columns', async () => {
    const forms = await bothForms(['referrals', 'payments', ID], { env: fx.env() });
    expectTableForms(forms, ['DATE', 'AMOUNT', 'CHECK NUMBER', 'PROCEDURES', 'ID'], ['2026-03-01']);
    expect(plain(forms.terminal.stdout)).toMatch(
      /^2026-03-01 +450\.50 +CHK-1001 +74176 CT Abdomen & Pelvis without contrast$/m,
    );
    expect(forms.terminal.stderr).toBe('Left out: ID (--wide shows all)\n');
    expect(forms.piped.stdout).toMatch(
      /^2026-03-01 +450\.50 +CHK-1001 +74176 CT Abdomen & Pelvis without contrast +[0-9a-f-]{36}$/m,
    );
    expect(forms.piped.stderr).toBe('');
    expect(fx.apiRequests()[0]!.path).toBe(`/api/v2/referrals/${ID}/payments`);
  });

  it('gives the payments as JSON', async () => {
    const r = await piped(['referrals', 'payments', ID, '--json'], { env: fx.env() });
    expect(r.code).toBe(0);
    const payments = JSON.parse(r.stdout);
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({ check_number: 'CHK-1001' });
  });

  it('an account without payments enabled is forbidden, exit 5, with one hint', async () => {
    const r = await piped(['referrals', 'payments', ID], { env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }) });
    expect(r.code).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr.match(/^hint:/gm)).toHaveLength(1);
  });

  it("takes a reference in any case, looked up with the list's q; an unknown one is exit 4", async () => {
    const byId = await bothForms(['referrals', 'payments', ID], { env: fx.env() });
    const byRef = await bothForms(['referrals', 'payments', 'r-240001'], { env: fx.env() });
    expect(byRef.terminal.stdout).toBe(byId.terminal.stdout);
    expect(byRef.piped.stdout).toBe(byId.piped.stdout);
    expect(byRef.terminal.code + byRef.piped.code).toBe(0);
    fx.reset();
    const r = await piped(['referrals', 'payments', 'r-240001', '--json'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(1);
    expect(fx.apiRequests().map((q) => q.path)).toEqual([
      '/api/v2/referrals?q=r-240001&page=1&per_page=100',
      `/api/v2/referrals/${ID}/payments`,
    ]);
    const none = await piped(['referrals', 'payments', 'R-000000'], { env: fx.env() });
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('no referral has the reference "R-000000"');
    fx.reset();
    expectUsageError(
      await piped(['referrals', 'payments'], { env: fx.env() }),
      /missing required argument/,
      fx.apiRequests().length,
    );
  });
});

describe('referrals payments', () => {
  /**
   * `referrals payments ID` and `referrals notifications ID` against the emulator: a table with the
   * columns people read, every field in JSON/NDJSON/CSV, the per-environment path, and the 403 a
   * partner meets until the read is enabled for the account.
   */
  const fx = mockFixture({ referrals: 12 });

  let id = '';

  beforeAll(async () => {
    await fx.start();
    const r = await run(['referrals', 'list', '--json'], { env: fx.env() });
    id = JSON.parse(r.stdout)[1].id;
  });

  afterAll(() => fx.stop());

  beforeEach(() => fx.reset());

  it('prints the date, amount, check number and procedures as a table', async () => {
    const r = await run(['referrals', 'payments', id], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    const [head, row] = r.stdout.split('\n');
    expect(head).toMatch(/^DATE\s+AMOUNT\s+CHECK NUMBER\s+PROCEDURES\s+ID$/);
    expect(row).toMatch(
      /^2026-03-01\s+450\.50\s+CHK-1001\s+\d{5} .+\s+00000000-0000-4000-8000-[0-9a-f]{12}$/,
    );
    expect(fx.apiRequests().map((q) => q.path)).toEqual([`/api/v2/referrals/${id}/payments`]);
  });

  it('--json is the records as the API sent them; CSV has every field, one column each', async () => {
    const j = await run(['referrals', 'payments', id, '--json'], { env: fx.env() });
    const records = JSON.parse(j.stdout);
    expect(Object.keys(records[0])).toEqual(['id', 'amount', 'date', 'check_number', 'procedures']);
    expect(records[0].amount).toBe(450.5);
    const c = await run(['referrals', 'payments', id, '--format', 'csv'], { env: fx.env() });
    const rows = parse(c.stdout, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(rows[0]!)).toEqual(['id', 'amount', 'date', 'check_number', 'procedures']);
    expect(JSON.parse(rows[0]!.procedures!)).toEqual(records[0].procedures);
    const n = await run(['referrals', 'payments', id, '--format', 'ndjson'], { env: fx.env() });
    expect(
      n.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(records);
  });

  it('a 403 endpoint_not_enabled says the read is enabled per account and whom to ask (exit 5)', async () => {
    const r = await run(['referrals', 'payments', id], { env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }) });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/code:\s+endpoint_not_enabled/);
    expect(r.stderr).toMatch(
      /^hint: Reading a referral's payments \("payment read" in the API\) is enabled per account/m,
    );
    expect(r.stderr).toMatch(/API support contact, or your account manager, to enable payment read/);
    expect(r.stdout).toBe('');
  });

  it('a 404 says the referral may not exist or the path may be another, and how to set it', async () => {
    const r = await run(['referrals', 'payments', '00000000-0000-4000-8000-00000000ffff'], { env: fx.env() });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /hint: Either there is no referral .* or this server keeps payments at another path/,
    );
    expect(r.stderr).toContain("imaging config set path.payments 'GET /api/v2/…/{id}/…' --env local");
  });

  it('an empty list is exit 0 with a note on stderr', async () => {
    const server = await testServer((_req, res) => json(res, 200, { payments: [] }));
    try {
      const r = await run(['referrals', 'payments', id], {
        env: { ...fx.env(), IMAGING_BASE_URL: server.url },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`No payments for referral ${id}.`);
    } finally {
      await server.close();
    }
  });
});
