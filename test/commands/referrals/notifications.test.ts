import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, lines, piped, plain, widest } from '../../fake-io.js';
import { json, mockFixture, run, testServer } from '../../helpers.js';
import '../../reliability.js';

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

  it("takes a reference in any case, looked up with the list's q; an unknown one is exit 4", async () => {
    const byId = await bothForms(['referrals', 'notifications', ID], { env: fx.env() });
    const byRef = await bothForms(['referrals', 'notifications', 'r-240001'], { env: fx.env() });
    expect(byRef.terminal.stdout).toBe(byId.terminal.stdout);
    expect(byRef.piped.stdout).toBe(byId.piped.stdout);
    expect(byRef.terminal.code + byRef.piped.code).toBe(0);
    fx.reset();
    const r = await piped(['referrals', 'notifications', 'r-240001', '--json'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(1);
    expect(fx.apiRequests().map((q) => q.path)).toEqual([
      '/api/v2/referrals?q=r-240001&page=1&per_page=100',
      `/api/v2/referrals/${ID}/notifications`,
    ]);
    const none = await piped(['referrals', 'notifications', 'R-000000'], { env: fx.env() });
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('no referral has the reference "R-000000"');
    fx.reset();
    expectUsageError(
      await piped(['referrals', 'notifications'], { env: fx.env() }),
      /missing required argument/,
      fx.apiRequests().length,
    );
  });
});

describe('referrals notifications', () => {
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

  it('prints updated, channel, type, status and visit; JSON keeps every field', async () => {
    const r = await run(['referrals', 'notifications', id], { env: fx.env() });
    expect(r.code, r.stderr).toBe(0);
    const [head, row] = r.stdout.split('\n');
    expect(head).toMatch(/^UPDATED\s+CHANNEL\s+TYPE\s+STATUS\s+VISIT\s+CREATED\s+ID$/);
    expect(row).toMatch(/^2026-01-05 14:00 UTC\s+sms\s+appointment_reminder\s+delivered\s+[0-9a-f-]{36}\s+/);
    const j = await run(['referrals', 'notifications', id, '--json'], { env: fx.env() });
    expect(Object.keys(JSON.parse(j.stdout)[0])).toEqual([
      'id',
      'channel',
      'notification_type',
      'status',
      'created_at',
      'updated_at',
      'visit_id',
    ]);
  });

  it('403 names the notification read', async () => {
    const r = await run(['referrals', 'notifications', id], {
      env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }),
    });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/enable notification read for your group/);
  });

  it('server text in a table goes through the sanitiser; JSON stays byte-exact', async () => {
    const hostile = {
      id: 'n1',
      channel: 'sms\u001b[31m',
      notification_type: 'x\u202ey',
      status: 'sent',
      created_at: 'a',
      updated_at: 'b',
      visit_id: null,
    };
    const server = await testServer((_req, res) => json(res, 200, [hostile]));
    try {
      const env = { ...fx.env(), IMAGING_BASE_URL: server.url };
      const t = await run(['referrals', 'notifications', id], { env });
      expect(t.code, t.stderr).toBe(0);
      expect(t.stdout).not.toContain('\u001b');
      expect(t.stdout).not.toContain('\u202e');
      const j = await run(['referrals', 'notifications', id, '--json'], { env });
      expect(JSON.parse(j.stdout)).toEqual([hostile]);
    } finally {
      await server.close();
    }
  });
});
