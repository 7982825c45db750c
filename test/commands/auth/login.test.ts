import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, hasEscapes, onTerminal, piped } from '../../fake-io.js';
import { mockFixture, tempDir } from '../../helpers.js';

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
