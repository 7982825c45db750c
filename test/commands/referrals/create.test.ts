import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, hasEscapes, onTerminal, piped, plain } from '../../fake-io.js';
import { json, mockFixture, run, testServer as startTestServer, tempDir } from '../../helpers.js';

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

describe('referrals create', () => {
  const fx = mockFixture({ referrals: 250 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    fx.reset();
    dir = tempDir();
  });

  afterEach(() => dir.cleanup());

  const payload = {
    line_of_business: 'personal_injury',
    patient: { first_name: 'Ada', last_name: "O'Neil, Jr." },
    note: 'x',
  };

  it('creates from a file, sending the bytes unchanged', async () => {
    const file = join(dir.path, 'ref.json');
    const text = `{\n  "line_of_business": "personal_injury",\n  "patient": {"first_name": "Ada", "last_name": "Lovelace"}\n}\n`;
    writeFileSync(file, text);
    const seen: string[] = [];
    const proxy = await startTestServer((_req, res, body) => {
      seen.push(body.toString('utf8'));
      json(res, 201, {
        id: '11111111-1111-4111-8111-111111111111',
        reference: 'R-1',
        patient: { first_name: 'Ada' },
        visits: [],
      });
    });
    try {
      const r = await run(['referrals', 'create', '--file', file], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: proxy.url, IMAGING_CONFIG_DIR: dir.path },
      });
      expect(r.code).toBe(0);
      expect(seen).toEqual([text]);
      expect(r.stderr).toContain('Created referral R-1 11111111-1111-4111-8111-111111111111');
    } finally {
      await proxy.close();
    }
  });

  it('creates from stdin against the emulator', async () => {
    const r = await run(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: JSON.stringify(payload),
    });
    expect(r.code).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created.patient.last_name).toBe("O'Neil, Jr.");
    const got = await run(['referrals', 'get', created.id, '--json'], { env: fx.env() });
    expect(JSON.parse(got.stdout).reference).toBe(created.reference);
  });

  it('rejects invalid JSON before sending anything (exit 2)', async () => {
    const r = await run(['referrals', 'create', '--file', '-'], { env: fx.env(), stdin: '{"patient": {' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('standard input is not valid JSON');
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('lists the 422 errors with exit 7', async () => {
    const r = await run(['referrals', 'create', '--file', '-'], {
      env: fx.env(),
      stdin: JSON.stringify({ line_of_business: 'patient_direct', patient: {} }),
    });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("- Patient first name can't be blank");
    expect(r.stderr).toContain('- Line of business patient_direct cannot be selected on referral creation');
  });

  it('in production, needs --yes when there is no terminal, and asks on a terminal', async () => {
    const env = {
      IMAGING_ENV: 'production',
      IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
      IMAGING_TOKEN: 'mock-prod',
      IMAGING_CONFIG_DIR: dir.path,
    };
    const file = join(dir.path, 'p.json');
    writeFileSync(file, JSON.stringify(payload));
    const refused = await run(['referrals', 'create', '--file', file], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect(fx.apiRequests()).toHaveLength(0);
    const declined = await run(['referrals', 'create', '--file', file], {
      env,
      stdinIsTTY: true,
      deps: { prompter: { secret: async () => '', confirm: async () => false } },
    });
    expect(declined.code).toBe(1);
    expect(declined.stderr).toContain('Nothing was sent.');
    expect(fx.apiRequests()).toHaveLength(0);
    const yes = await run(['referrals', 'create', '--file', file, '--yes'], { env });
    expect(yes.code).toBe(0);
    expect(fx.apiRequests()).toHaveLength(1);
  });
});
