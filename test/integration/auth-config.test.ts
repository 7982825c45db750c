import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Prompter } from '../../src/context.js';
import { mockFixture, run, tempDir } from '../helpers.js';

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

const fakePrompter = (answer: string): Prompter => ({
  secret: async () => answer,
  confirm: async () => true,
});

describe('auth login', () => {
  it('reads the token from stdin with --with-token, verifies it and stores it 0600', async () => {
    const r = await run([...local, 'auth', 'login', '--with-token', '--base-url', fx.mock.url], {
      env: env(),
      stdin: `${TOKEN}\n`,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `Logged in to local (${fx.mock.url}) with token ****9c2e, kept in the config file; it is sent only to ${fx.mock.url}.`,
    );
    expect(r.stderr).not.toContain(TOKEN);
    expect(fx.apiRequests()).toHaveLength(1);
    const file = join(cfg.path, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(cfg.path).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.environments.local).toEqual({
      token: TOKEN,
      base_url: fx.mock.url,
      token_origin: fx.mock.url,
    });
    // The stored token and base URL are used from now on.
    const cpt = await run([...local, 'cpt', '73721', '--json'], { env: env() });
    expect(cpt.code).toBe(0);
  });

  it('prompts (hidden) on a terminal', async () => {
    const r = await run([...local, 'auth', 'login', '--base-url', fx.mock.url], {
      env: env(),
      stdinIsTTY: true,
      deps: { prompter: fakePrompter(TOKEN) },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(cfg.path, 'config.json'), 'utf8')).environments.local.token).toBe(
      TOKEN,
    );
  });

  it('refuses to prompt when stdin is not a terminal', async () => {
    const r = await run([...local, 'auth', 'login', '--base-url', fx.mock.url], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--with-token');
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('does not store a token the API refuses (exit 3)', async () => {
    const r = await run([...local, 'auth', 'login', '--with-token', '--base-url', fx.mock.url], {
      env: env(),
      stdin: 'wrong-token\n',
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refused this token \(unauthorized\); it was not stored/);
    expect(() => readFileSync(join(cfg.path, 'config.json'))).toThrow();
  });

  it('stores without a request with --no-verify', async () => {
    const r = await run(
      [...local, 'auth', 'login', '--with-token', '--no-verify', '--base-url', fx.mock.url],
      {
        env: env(),
        stdin: 'anything-goes',
      },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('(not verified)');
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('needs a base URL for sandbox before asking for anything', async () => {
    const r = await run(['auth', 'login', '--with-token'], { env: env(), stdin: TOKEN });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no base URL is set for the sandbox environment');
  });

  it('rejects an empty token', async () => {
    const r = await run([...local, 'auth', 'login', '--with-token'], { env: env(), stdin: '\n' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the token is empty');
  });
});

describe('auth status and logout', () => {
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

describe('missing token', () => {
  it('exits 3 with how to log in, sending nothing', async () => {
    const r = await run(['--env', 'sandbox', '--base-url', fx.mock.url, 'cpt', '73721'], { env: env() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('error: not logged in to the sandbox environment');
    expect(r.stderr).toContain('hint: Run: imaging auth login');
    expect(fx.apiRequests()).toHaveLength(0);
  });
  it('exits 2 when no base URL is known for the environment', async () => {
    const r = await run(['--env', 'production', 'modalities'], { env: env({ IMAGING_TOKEN: 'x' }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('imaging config set base-url https://… --env production');
  });
});

describe('config', () => {
  it('sets, gets, lists and unsets; precedence is flag > env var > stored > default', async () => {
    expect(
      (await run(['config', 'set', 'base-url', 'https://stored.example.com/pre/api/v2'], { env: env() }))
        .code,
    ).toBe(0);
    expect((await run(['config', 'get', 'base-url'], { env: env() })).stdout).toBe(
      'https://stored.example.com/pre\n',
    );
    const status = async (extraArgs: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
      JSON.parse(
        (await run(['--env', 'sandbox', ...extraArgs, 'auth', 'status', '--json'], { env: env(extraEnv) }))
          .stdout,
      )[0];
    expect(await status([])).toMatchObject({
      base_url: 'https://stored.example.com/pre',
      base_url_source: 'config',
    });
    expect(await status([], { IMAGING_BASE_URL: 'https://env.example.com' })).toMatchObject({
      base_url: 'https://env.example.com',
      base_url_source: 'IMAGING_BASE_URL',
    });
    expect(
      await status(['--base-url', 'https://flag.example.com'], {
        IMAGING_BASE_URL: 'https://env.example.com',
      }),
    ).toMatchObject({
      base_url: 'https://flag.example.com',
      base_url_source: '--base-url',
    });
    await run(['config', 'set', 'env', 'local'], { env: env() });
    const list = await run(['config', 'list'], { env: env() });
    expect(list.stdout).toMatch(/env\s+\(all\)\s+local/);
    expect(list.stdout).toMatch(/base-url\s+sandbox\s+https:\/\/stored\.example\.com\/pre/);
    expect((await run(['config', 'unset', 'base-url', '--env', 'sandbox'], { env: env() })).code).toBe(0);
    const missing = await run(['config', 'get', 'base-url', '--env', 'sandbox'], { env: env() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('base-url is not set for sandbox');
  });

  it('masks tokens in config list', async () => {
    await run([...local, 'auth', 'login', '--with-token', '--no-verify'], { env: env(), stdin: TOKEN });
    const r = await run(['config', 'list', '--json'], { env: env() });
    expect(r.stdout).toContain('****9c2e');
    expect(r.stdout).not.toContain(TOKEN);
  });

  it('never takes a token as an argument', async () => {
    const r = await run(['config', 'set', 'token', 'abc'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('imaging auth login');
  });

  it('rejects unknown keys, bad URLs and unknown environments', async () => {
    expect((await run(['config', 'set', 'colour', 'red'], { env: env() })).code).toBe(2);
    expect((await run(['config', 'set', 'base-url', 'not a url'], { env: env() })).code).toBe(2);
    expect((await run(['config', 'set', 'env', 'staging'], { env: env() })).stderr).toContain(
      'unknown environment "staging"',
    );
  });

  it('says clearly when the config store cannot be written', async () => {
    const { writeFileSync } = await import('node:fs');
    const blocker = join(cfg.path, 'not-a-dir');
    writeFileSync(blocker, '');
    const r = await run(['config', 'set', 'env', 'local'], {
      env: { IMAGING_CONFIG_DIR: join(blocker, 'sub') },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: cannot write the config file .*not-a-dir\/sub\/config.json/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('prints the path of the store', async () => {
    expect((await run(['config', 'path'], { env: env() })).stdout).toBe(`${join(cfg.path, 'config.json')}\n`);
  });

  it('reports a corrupt config file clearly', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(cfg.path, 'config.json'), '{not json');
    const r = await run(['modalities'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not valid JSON');
  });
});
