import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, hasEscapes, onTerminal, piped, plain } from '../../fake-io.js';
import { mockFixture } from '../../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const payload = (first: string) =>
  JSON.stringify({
    line_of_business: 'personal_injury',
    patient: { first_name: first, last_name: 'Lovelace' },
  });

describe('imaging referrals create', () => {
  it('creates a referral from a file and says which, on a terminal and piped', async () => {
    const file = join(fx.configDir, 'referral.json');
    writeFileSync(file, payload('Ada'));
    const t = await onTerminal(['referrals', 'create', '--file', file], { env: fx.env() });
    expect(t.code).toBe(0);
    expect(plain(t.stderr)).toMatch(/^Created referral R-\d+ [0-9a-f-]{36}/);
    expect(plain(t.stdout)).toMatch(/^Referral R-\d+ {2}[0-9a-f-]{36}\n/);
    expect(plain(t.stdout)).toContain('Ada Lovelace');
    const p = await piped(['referrals', 'create', '--file', '-'], { env: fx.env(), stdin: payload('Grace') });
    expect(p.code).toBe(0);
    expect(hasEscapes(p.stdout + p.stderr)).toBe(false);
    expect(p.stderr).toMatch(/^Created referral R-\d+ [0-9a-f-]{36}/);
    expect(p.stdout).toContain('Grace Lovelace');
    expect(fx.apiRequests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /api/v2/referrals',
      'POST /api/v2/referrals',
    ]);
  });

  it('prints the created referral as JSON, and it can be read back', async () => {
    const r = await piped(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: payload('Hedy'),
    });
    const created = JSON.parse(r.stdout);
    expect(created.patient.first_name).toBe('Hedy');
    const got = JSON.parse(
      (await piped(['referrals', 'get', created.id, '--json'], { env: fx.env() })).stdout,
    );
    expect(got.reference).toBe(created.reference);
  });

  it("lists the server's validation errors, exit 7", async () => {
    const r = await piped(['referrals', 'create', '--file', '-'], {
      env: fx.env(),
      stdin: JSON.stringify({ line_of_business: 'personal_injury', patient: {} }),
    });
    expect(r.code).toBe(7);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("- Patient first name can't be blank");
  });

  it('refuses a missing file or a body that is not a JSON object, before any request', async () => {
    const seen = () => fx.apiRequests().length;
    expectUsageError(await piped(['referrals', 'create'], { env: fx.env() }), /--file/, seen());
    expectUsageError(
      await piped(['referrals', 'create', '--file', '-'], { env: fx.env(), stdin: '{"patient": {' }),
      /not valid JSON/,
      seen(),
    );
    expectUsageError(
      await piped(['referrals', 'create', '--file', '-'], { env: fx.env(), stdin: '[1,2]' }),
      /must be a JSON object/,
      seen(),
    );
  });
});
