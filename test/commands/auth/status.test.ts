import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, lines, piped, plain, widest } from '../../fake-io.js';
import { mockFixture, run, tempDir } from '../../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const TOKEN = 'mock-status-TOKEN-77ab';

describe('imaging auth status', () => {
  it('shows each environment, the active one starred, the token masked, in both forms, with no request', async () => {
    const { terminal, piped: p } = await bothForms(['auth', 'status'], {
      env: fx.env({ IMAGING_TOKEN: TOKEN }),
    });
    expect(fx.apiRequests()).toHaveLength(0);
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
      expect(r.stderr).toContain('* active environment (from IMAGING_ENV)\n');
    }
    expect(terminal.stdout).toContain('\u001b[1m');
    expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    expect(plain(terminal.stdout)).toMatch(
      /^\* +local +http:\/\/127\.0\.0\.1:\d+ \(IMAGING_BASE_URL\) +\*\*\*\*77ab/m,
    );
    expect(hasEscapes(p.stdout + p.stderr)).toBe(false);
    const rows = lines(p.stdout);
    expect(rows[0]!.trim().split(/ {2,}/)).toEqual(['ENVIRONMENT', 'BASE URL', 'TOKEN', 'TOKEN ORIGIN']);
    expect(rows.slice(1).map((l) => l.slice(3).split(' ')[0])).toEqual(['sandbox', 'production', 'local']);
    expect(p.stdout).toMatch(
      /^\* +local +http:\/\/127\.0\.0\.1:\d+ \(IMAGING_BASE_URL\) +\*\*\*\*77ab \(IMAGING_TOKEN\) +/m,
    );
  });

  it('gives the same facts as JSON, the token masked', async () => {
    const r = await piped(['auth', 'status', '--json'], { env: fx.env({ IMAGING_TOKEN: TOKEN }) });
    const envs = JSON.parse(r.stdout);
    expect(envs.map((e: { environment: string }) => e.environment)).toEqual([
      'sandbox',
      'production',
      'local',
    ]);
    expect(envs.find((e: { active: boolean }) => e.active).environment).toBe('local');
    expect(r.stdout).not.toContain(TOKEN);
  });

  it('--check asks the API once, for the one environment that can be asked, and says how each went', async () => {
    const r = await piped(['auth', 'status', '--check'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(fx.apiRequests()).toHaveLength(1);
    const rows = lines(r.stdout);
    expect(rows[0]!.trim().split(/ {2,}/)).toEqual([
      'ENVIRONMENT',
      'BASE URL',
      'TOKEN',
      'TOKEN ORIGIN',
      'CHECK',
    ]);
    expect(rows[1]).toMatch(/^ {3}sandbox .* no base URL$/);
    expect(rows[3]).toMatch(/^\* +local .* ok$/);
  });

  it('takes no argument', async () => {
    expectUsageError(
      await piped(['auth', 'status', 'local'], { env: fx.env() }),
      /argument/,
      fx.apiRequests().length,
    );
  });
});

describe('auth status and logout', () => {
  const fx = mockFixture();

  beforeAll(() => fx.start());

  afterAll(async () => {
    await fx.stop();
    cfg?.cleanup(); // the last test's folder
  });

  let cfg: ReturnType<typeof tempDir>;

  beforeEach(() => {
    fx.reset();
    cfg?.cleanup();
    cfg = tempDir();
  });

  // The local environment, pointed at this test's emulator, with an empty config store.
  const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: cfg.path, ...extra });

  const local = ['--env', 'local'];

  const TOKEN = 'mock-ok-TOKEN-7f3a9c2e';

  it('shows each environment with the token masked to its last four characters', async () => {
    await run([...local, 'auth', 'login', '--with-token', '--base-url', fx.mock.url], {
      env: env(),
      stdin: TOKEN,
    });
    const r = await run(['auth', 'status'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/sandbox\s+not set\s+not logged in/);
    expect(r.stdout).toContain(`local        ${fx.mock.url} (config)  ****9c2e (config)`);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    const j = JSON.parse((await run(['auth', 'status', '--json'], { env: env() })).stdout);
    expect(j.find((x: { environment: string }) => x.environment === 'local').token).toBe('****9c2e');
  });

  it('says where the token comes from: IMAGING_TOKEN wins', async () => {
    const r = await run([...local, 'auth', 'status', '--json'], {
      env: env({ IMAGING_TOKEN: 'mock-from-env-ABCD' }),
    });
    const [row] = JSON.parse(r.stdout);
    expect(row).toMatchObject({ environment: 'local', token_source: 'IMAGING_TOKEN', token: '****ABCD' });
  });

  it('--check makes one request and reports a refused token with exit 3', async () => {
    const ok = await run([...local, '--base-url', fx.mock.url, 'auth', 'status', '--check'], { env: env() });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/local .*emulator default.*\s+ok/);
    const bad = await run([...local, '--base-url', fx.mock.url, 'auth', 'status', '--check'], {
      env: env({ IMAGING_TOKEN: 'mock-expired' }),
    });
    expect(bad.code).toBe(3);
    expect(bad.stdout).toContain('401 api_token_expired');
  });

  it('logout removes the stored token and keeps the base URL', async () => {
    await run([...local, 'auth', 'login', '--with-token', '--base-url', fx.mock.url], {
      env: env(),
      stdin: TOKEN,
    });
    const r = await run([...local, 'auth', 'logout'], { env: env() });
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(cfg.path, 'config.json'), 'utf8')).environments.local).toEqual({
      base_url: fx.mock.url,
    });
    const again = await run([...local, 'auth', 'logout'], { env: env() });
    expect(again.stderr).toContain('nothing to do');
  });
});
