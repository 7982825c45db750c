import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { keychainRead } from '../../src/config/keychain.js';
import { cli, mockFixture, tempDir } from '../helpers.js';
import { type SecretService, secretServiceMissing, startSecretService } from '../keychain-service.js';

/**
 * A token kept in a real Secret Service, then the keychain stops answering (a session bus that
 * accepts the connection and never says a word):
 * `auth logout` says only what happened and exits 1; `auth status --check` exits 3, as for any
 * token that cannot be sent.
 */

const missing = secretServiceMissing();
const skipNote = missing ? ` (skipped: ${missing})` : '';

describe.skipIf(missing)(`a keychain that does not answer${skipNote}`, () => {
  let service: SecretService;
  const fx = mockFixture();
  let cfg: ReturnType<typeof tempDir>;
  const TOKEN = 'mock-keychain-TOKEN-91c2';
  let busDir: string;
  let silent: Server;
  beforeAll(async () => {
    service = await startSecretService();
    busDir = mkdtempSync(join(tmpdir(), 'imaging-bus-'));
    silent = createServer((socket) => socket.on('data', () => {}));
    await new Promise<void>((resolve) => silent.listen(join(busDir, 'bus'), resolve));
    await fx.start();
  });
  afterAll(async () => {
    service?.stop();
    await fx.stop();
    silent.close();
    rmSync(busDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    cfg = tempDir();
    const login = await imaging(['auth', 'login', '--base-url', fx.mock.url, '--with-token'], {}, TOKEN);
    expect(login.exitCode).toBe(0);
    expect(String(login.stderr)).toContain('kept in the OS keychain');
    return () => cfg.cleanup();
  });
  // In-process: the keychain helper is a real process either way (keychain.ts starts it from the
  // worker as from the binary), talking to the real silent bus; keychain.test.ts runs the binary
  // against a keychain that cannot be read.
  const imaging = (args: string[], extra: NodeJS.ProcessEnv = {}, input?: string) =>
    cli(false, ['--env', 'local', ...args], {
      env: { ...service.env, IMAGING_CONFIG_DIR: cfg.path, IMAGING_KEYCHAIN: '', ...extra },
      ...(input !== undefined ? { input } : {}),
    });
  // A short limit: the 3 s default is proved in keychain.test.ts.
  const noKeychain = () => ({
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(busDir, 'bus')}`,
    IMAGING_KEYCHAIN_TIMEOUT: '0.5',
  });

  it('auth logout: no claim that the token was removed, exit 1, naming the entry left behind', async () => {
    const r = await imaging(['auth', 'logout'], noKeychain());
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).not.toContain('removed from the OS keychain');
    expect(String(r.stderr)).toContain('the OS keychain could not be reached');
    expect(String(r.stderr)).toContain('may still hold it');
    expect(keychainRead(`local ${fx.mock.url}`, service.env)).toBe(TOKEN);
    await imaging(['auth', 'login', '--base-url', fx.mock.url, '--with-token'], {}, TOKEN);
    expect((await imaging(['auth', 'logout'])).exitCode).toBe(0);
  });

  it('auth status --check: exit 3, the row saying the token was not sent', async () => {
    const before = fx.mock.requests.length;
    const r = await imaging(['auth', 'status', '--check', '--json'], noKeychain());
    expect(r.exitCode).toBe(3);
    const row = JSON.parse(String(r.stdout)).find((x: { environment: string }) => x.environment === 'local');
    expect(row.token_source).toMatch(/^keychain:/);
    expect(row.check).toBe('not sent: the keychain could not be read');
    expect(fx.mock.requests.length).toBe(before);
    expect((await imaging(['auth', 'logout'])).exitCode).toBe(0);
  });
});
