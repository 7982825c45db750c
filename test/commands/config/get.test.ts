import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, piped } from '../../fake-io.js';
import { mockFixture, run, tempDir } from '../../helpers.js';

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.cleanup());
const env = (extra: NodeJS.ProcessEnv = {}) => ({
  IMAGING_CONFIG_DIR: dir.path,
  IMAGING_ENV: 'local',
  ...extra,
});

describe('imaging config get', () => {
  it('prints the value alone on stdout and where it comes from on stderr, in both forms', async () => {
    await piped(['config', 'set', 'base-url', 'http://127.0.0.1:9/'], { env: env() });
    const { terminal, piped: p } = await bothForms(['config', 'get', 'base-url'], { env: env() });
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('http://127.0.0.1:9\n');
      expect(r.stderr).toMatch(/^base-url: /);
    }
  });

  it('says when the environment overrides the stored value', async () => {
    const r = await piped(['config', 'get', 'base-url'], {
      env: env({ IMAGING_BASE_URL: 'http://127.0.0.1:7' }),
    });
    expect(r.stdout).toBe('http://127.0.0.1:7\n');
    expect(r.stderr).toBe('base-url: from IMAGING_BASE_URL (local)\n');
  });

  it('refuses an unknown key, and the token, with the known keys named', async () => {
    const unknown = await piped(['config', 'get', 'colour'], { env: env() });
    expectUsageError(unknown, /unknown config key "colour"/, 0);
    expect(unknown.stderr).toContain(
      'Known keys: env, base-url, path.payments, path.notifications, path.referral_update, path.auto_book, path.sandbox_advance, path.sandbox_fixture, path.sandbox_test_webhook',
    );
    expectUsageError(
      await piped(['config', 'get', 'token'], { env: env() }),
      /the token is not a config value/,
      0,
    );
    expectUsageError(await piped(['config', 'get'], { env: env() }), /missing required argument 'key'/, 0);
  });
});

describe('config get path.* shows only a path the tool would use', () => {
  const fx = mockFixture({ referrals: 20 });

  let dir: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    await fx.start();
  });

  afterAll(async () => {
    await fx.stop();
  });

  beforeEach(() => {
    dir = tempDir();
    fx.reset();
  });

  afterEach(() => dir.cleanup());

  it('a hand-edited path with escapes is refused, never written raw', async () => {
    const dir = tempDir();
    try {
      writeFileSync(
        join(dir.path, 'config.json'),
        JSON.stringify({
          environments: { sandbox: { paths: { payments: '\u001b]0;PWNED\u0007//evil.example/{id}\u202e' } } },
        }),
      );
      const r = await run(['config', 'get', 'path.payments', '--env', 'sandbox'], {
        env: { IMAGING_CONFIG_DIR: dir.path },
      });
      // The config's check on read names the key (exit 1); config get's own check stands behind it.
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/environments\.sandbox\.paths\.payments/);
      expect(r.stderr).not.toMatch(/[\u001b\u0007\u202e]/);
    } finally {
      dir.cleanup();
    }
  });
});

describe('config get shows the value in use and where it comes from', () => {
  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
  });

  afterEach(() => dir.cleanup());

  const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: dir.path, ...extra });

  it('base-url --env local: the default, as auth status shows it (not "not set")', async () => {
    const r = await run(['config', 'get', 'base-url', '--env', 'local'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('http://127.0.0.1:4010\n');
    expect(r.stderr).toBe('base-url: the default (local)\n');
    const status = JSON.parse(
      (await run(['auth', 'status', '--env', 'local', '--json'], { env: env() })).stdout,
    )[0];
    expect(status).toMatchObject({ base_url: 'http://127.0.0.1:4010', base_url_source: 'default' });
    const j = await run(['config', 'get', 'base-url', '--env', 'local', '--json'], { env: env() });
    expect(JSON.parse(j.stdout)).toEqual({
      key: 'base-url',
      value: 'http://127.0.0.1:4010',
      source: 'default',
      environment: 'local',
    });
  });

  it('stored, from IMAGING_BASE_URL, from --base-url; env from IMAGING_ENV or the default', async () => {
    await run(['config', 'set', 'base-url', 'https://stored.example.com', '--env', 'sandbox'], {
      env: env(),
    });
    const stored = await run(['config', 'get', 'base-url'], { env: env() });
    expect([stored.stdout, stored.stderr]).toEqual([
      'https://stored.example.com\n',
      'base-url: stored in the config (sandbox)\n',
    ]);
    const fromEnv = await run(['config', 'get', 'base-url'], {
      env: env({ IMAGING_BASE_URL: 'https://env.example.com' }),
    });
    expect([fromEnv.stdout, fromEnv.stderr]).toEqual([
      'https://env.example.com\n',
      'base-url: from IMAGING_BASE_URL (sandbox)\n',
    ]);
    const flag = await run(['config', 'get', 'base-url', '--base-url', 'https://flag.example.com'], {
      env: env(),
    });
    expect(flag.stdout).toBe('https://flag.example.com\n');
    expect(flag.stderr).toContain('from --base-url');
    const e = await run(['config', 'get', 'env'], { env: env() });
    expect([e.stdout, e.stderr]).toEqual(['sandbox\n', 'env: the default\n']);
    const e2 = await run(['config', 'get', 'env'], { env: env({ IMAGING_ENV: 'local' }) });
    expect([e2.stdout, e2.stderr]).toEqual(['local\n', 'env: from IMAGING_ENV\n']);
  });

  it('production with nothing stored: exit 1, not set', async () => {
    const r = await run(['config', 'get', 'base-url', '--env', 'production'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('base-url is not set for production');
  });
});
