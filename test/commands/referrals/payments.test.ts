import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectTableForms, expectUsageError, piped, plain } from '../../fake-io.js';
import { mockFixture } from '../../helpers.js';

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

  it('takes a referral id, checked before any request', async () => {
    expectUsageError(
      await piped(['referrals', 'payments', 'R-240001'], { env: fx.env() }),
      /is not a referral id/,
      fx.apiRequests().length,
    );
    expectUsageError(
      await piped(['referrals', 'payments'], { env: fx.env() }),
      /missing required argument/,
      fx.apiRequests().length,
    );
  });
});
