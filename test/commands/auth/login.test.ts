import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Prompter } from '../../../src/context.js';
import { expectUsageError, hasEscapes, onTerminal, piped } from '../../fake-io.js';
import { mockFixture, run, tempDir } from '../../helpers.js';

const fx = mockFixture();
let cfg: ReturnType<typeof tempDir>;
beforeAll(() => fx.start());
afterAll(async () => {
  await fx.stop();
  cfg?.cleanup();
});
beforeEach(() => {
  fx.reset();
  cfg?.cleanup();
  cfg = tempDir();
});

const TOKEN = 'mock-login-TOKEN-5d1e';
const env = () => ({ IMAGING_CONFIG_DIR: cfg.path });
const args = () => ['--env', 'local', 'auth', 'login', '--base-url', fx.mock.url];
const stored = () => JSON.parse(readFileSync(join(cfg.path, 'config.json'), 'utf8')).environments.local;

describe('imaging auth login', () => {
  it('on a terminal, asks for the token hidden, checks it once and stores it owner-only', async () => {
    let asked = '';
    const r = await onTerminal(args(), {
      env: env(),
      stdinIsTTY: true,
      deps: {
        prompter: {
          secret: async (m) => {
            asked = m;
            return TOKEN;
          },
          confirm: async () => true,
        },
      },
    });
    expect(r.code).toBe(0);
    expect(asked).not.toBe('');
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Logged in to local (${fx.mock.url}) with token ****5d1e`);
    expect(r.stderr).not.toContain(TOKEN);
    expect(fx.apiRequests()).toHaveLength(1);
    expect(stored().token).toBe(TOKEN);
    expect(statSync(join(cfg.path, 'config.json')).mode & 0o777).toBe(0o600);
  });

  it('piped, reads the token from stdin with --with-token and says the same, without escapes', async () => {
    const r = await piped([...args(), '--with-token'], { env: env(), stdin: `${TOKEN}\n` });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(hasEscapes(r.stderr)).toBe(false);
    expect(r.stderr).toContain(
      `Logged in to local (${fx.mock.url}) with token ****5d1e, kept in the config file; it is sent only to ${fx.mock.url}.`,
    );
    expect(stored()).toMatchObject({ token: TOKEN, base_url: fx.mock.url });
  });

  it('for local, a real token is refused (exit 2), not stored, and nothing is sent: the emulator takes only its own', async () => {
    for (const extra of [['--no-verify'], []]) {
      const before = fx.apiRequests().length;
      const real = await piped([...args(), '--with-token', ...extra], {
        env: env(),
        stdin: 'prod-abc123def456\n',
      });
      expectUsageError(
        real,
        /local is the emulator, which takes only the emulator's tokens/,
        fx.apiRequests().length - before,
      );
      expect(real.stderr).not.toContain('prod-abc123def456');
      expect(existsSync(join(cfg.path, 'config.json')) ? stored()?.token : undefined).toBeUndefined();
    }
    const mock = await piped([...args(), '--with-token'], { env: env(), stdin: `${TOKEN}\n` });
    expect(mock.code).toBe(0);
  });

  it('a token the API refuses is not stored (exit 3)', async () => {
    const r = await piped([...args(), '--with-token'], { env: env(), stdin: 'mock-expired\n' });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(existsSync(join(cfg.path, 'config.json')) ? stored()?.token : undefined).toBeUndefined();
  });

  it('with no terminal to ask on, or an empty token, stops before any request', async () => {
    const noTty = await piped(args(), { env: env() });
    expectUsageError(
      noTty,
      /standard input is not a terminal, so there is no one to ask for the token/,
      fx.apiRequests().length,
    );
    expect(noTty.stderr).toContain('hint: Pipe it in instead: imaging auth login --with-token < token.txt');
    expectUsageError(
      await piped([...args(), '--with-token'], { env: env(), stdin: '\n' }),
      /the token is empty/,
      fx.apiRequests().length,
    );
  });
});

describe('auth login', () => {
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
      stdin: 'mock-expired\n',
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refused this token \(api_token_expired\); it was not stored/);
    expect(() => readFileSync(join(cfg.path, 'config.json'))).toThrow();
  });

  it('stores without a request with --no-verify', async () => {
    const r = await run(
      [...local, 'auth', 'login', '--with-token', '--no-verify', '--base-url', fx.mock.url],
      {
        env: env(),
        stdin: 'mock-anything-goes',
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
