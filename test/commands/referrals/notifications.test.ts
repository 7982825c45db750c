import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, lines, piped, plain, widest } from '../../fake-io.js';
import { mockFixture } from '../../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const ID = '3212c76a-c27e-4ca2-9e90-bb9c865c1630'; // R-240001 of the emulator's data

describe('imaging referrals notifications', () => {
  it('lists notification metadata in both forms; the terminal keeps the columns people read', async () => {
    const { terminal, piped: p } = await bothForms(['referrals', 'notifications', ID], { env: fx.env() });
    expect(terminal.code).toBe(0);
    expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    expect(terminal.stdout).toContain('\u001b[1m');
    expect(plain(terminal.stdout)).toMatch(/ sms +appointment_reminder +delivered$/m);
    expect(terminal.stderr).toMatch(/^Left out: .*\(--wide shows all\)\n$/);
    expect(p.code).toBe(0);
    expect(hasEscapes(p.stdout)).toBe(false);
    expect(lines(p.stdout)[0]!.split(/ {2,}/)).toEqual([
      'UPDATED',
      'CHANNEL',
      'TYPE',
      'STATUS',
      'VISIT',
      'CREATED',
      'ID',
    ]);
    expect(lines(p.stdout)).toHaveLength(2);
    expect(p.stdout).toMatch(/ sms +appointment_reminder +delivered +41fcdf92-b858-4710-9cbe-b02279e0d97f +/);
    expect(p.stderr).toBe('');
  });

  it('gives metadata only, as JSON: no message text', async () => {
    const r = await piped(['referrals', 'notifications', ID, '--json'], { env: fx.env() });
    const rows = JSON.parse(r.stdout);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ channel: 'sms', status: 'delivered' });
  });

  it('takes a referral id, checked before any request', async () => {
    expectUsageError(
      await piped(['referrals', 'notifications', 'not-an-id'], { env: fx.env() }),
      /is not a referral id/,
      fx.apiRequests().length,
    );
  });
});
