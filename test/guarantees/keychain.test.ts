import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  KEYCHAIN_TIMEOUT_MS,
  KeychainUnavailable,
  keychainRead,
  keychainRemove,
  keychainStore,
} from '../../src/config/keychain.js';
import { BIN, cli, mockFixture, tempDir } from '../helpers.js';
import { type SecretService, secretServiceMissing, startSecretService } from '../keychain-service.js';

const missing = secretServiceMissing();
if (missing) console.log(`keychain: the Secret Service tests are skipped: ${missing}`);
const noStrace = spawnSync('strace', ['-V']).status !== 0;
if (noStrace) console.log('keychain: the argv test is skipped: strace is not installed');

// One Secret Service for the file (a D-Bus daemon and gnome-keyring): the blocks below use
// accounts of their own in it.
let service: SecretService;
beforeAll(async () => {
  if (!missing) service = await startSecretService();
});
afterAll(() => service?.stop());

describe.skipIf(missing)('the OS keychain, against a real Secret Service', () => {
  it('stores, reads and removes a token under its account', async () => {
    keychainStore('sandbox https://sandbox.example', 'tok-one', service.env);
    keychainStore('production https://api.example', 'tok-two', service.env);
    expect(keychainRead('sandbox https://sandbox.example', service.env)).toBe('tok-one');
    expect(keychainRead('production https://api.example', service.env)).toBe('tok-two');
    expect(keychainRemove('sandbox https://sandbox.example', service.env)).toBe(true);
    expect(keychainRead('sandbox https://sandbox.example', service.env)).toBeNull();
    expect(keychainRead('production https://api.example', service.env)).toBe('tok-two');
  });
});

describe('without a keychain', () => {
  let dir: string;
  let silent: Server;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'imaging-bus-'));
    // A session bus that accepts the connection and never says a word.
    silent = createServer((socket) => socket.on('data', () => {}));
    await new Promise<void>((resolve) => silent.listen(join(dir, 'bus'), resolve));
  });
  afterAll(() => {
    silent.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says no keychain answered when there is no session bus', async () => {
    const env = { ...process.env, IMAGING_KEYCHAIN: '', DBUS_SESSION_BUS_ADDRESS: '', HOME: dir };
    expect(() => keychainStore('sandbox x', 'tok', env)).toThrow(KeychainUnavailable);
  });

  it('gives up on a keychain that never answers, in its time limit', async () => {
    const env = {
      ...process.env,
      IMAGING_KEYCHAIN: '',
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'bus')}`,
    };
    const started = Date.now();
    let err: unknown;
    try {
      keychainRead('sandbox x', env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KeychainUnavailable);
    expect((err as KeychainUnavailable).timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(KEYCHAIN_TIMEOUT_MS + 2000);
  });
});

describe.skipIf(missing)('auth login, a lookup, auth status and auth logout with the OS keychain', () => {
  const fx = mockFixture();
  let cfg: ReturnType<typeof tempDir>;
  const TOKEN = 'mock-keychain-TOKEN-7f3a';
  beforeAll(async () => {
    await fx.start();
  });
  afterAll(async () => {
    await fx.stop();
  });
  beforeEach(() => {
    cfg?.cleanup();
    cfg = tempDir();
  });
  // In-process unless `real`: the keychain helper is a real process either way (keychain.ts starts
  // it from the worker as from the binary); the binary itself is run where its run is the point.
  const imaging = (args: string[], extra: NodeJS.ProcessEnv = {}, input?: string, real = false) =>
    cli(real, ['--env', 'local', ...args], {
      env: {
        ...service.env,
        IMAGING_CONFIG_DIR: cfg.path,
        IMAGING_KEYCHAIN: '',
        IMAGING_CACHE_DIR: join(cfg.path, 'cache'),
        ...extra,
      },
      ...(input !== undefined ? { input } : {}),
    });
  const config = () => readFileSync(join(cfg.path, 'config.json'), 'utf8');

  it('keeps the token in the keychain, never in the file, and uses it', async () => {
    // The real binary stores the token and reads it back to send it.
    const login = await imaging(
      ['auth', 'login', '--base-url', fx.mock.url, '--with-token'],
      {},
      TOKEN,
      true,
    );
    expect(login.exitCode).toBe(0);
    expect(String(login.stderr)).toContain('kept in the OS keychain');
    expect(config()).not.toContain(TOKEN);
    expect(JSON.parse(config()).environments.local.token_store).toBe('keychain');

    const status = await imaging(['auth', 'status', '--json']);
    const row = JSON.parse(String(status.stdout)).find(
      (r: { environment: string }) => r.environment === 'local',
    );
    expect(row.token_store).toBe('keychain');
    expect(row.token).toBe('****7f3a');

    const lookup = await imaging(['modalities', '--json', '--no-cache'], {}, undefined, true);
    expect(lookup.exitCode).toBe(0);

    const logout = await imaging(['auth', 'logout']);
    expect(logout.exitCode).toBe(0);
    expect(String(logout.stderr)).toContain('removed from the OS keychain');
    expect(keychainRead(`local ${fx.mock.url}`, service.env)).toBeNull();
  });

  // Every program started, with its whole argv, as strace records it: the token reaches the keychain
  // helper on its standard input, never in an argv another user can read through ps.
  it.skipIf(noStrace)('passes the token to the keychain helper on its input, never in any argv', async () => {
    const trace = join(cfg.path, 'execve.log');
    const run = (args: string[], input?: string) =>
      execa(
        'strace',
        [
          '-f',
          '-qq',
          '-e',
          'trace=execve',
          '-s',
          '65536',
          '-o',
          trace,
          process.execPath,
          BIN,
          '--env',
          'local',
          ...args,
        ],
        {
          reject: false,
          extendEnv: false,
          env: {
            ...service.env,
            IMAGING_CONFIG_DIR: cfg.path,
            IMAGING_CACHE_DIR: join(cfg.path, 'cache'),
            NO_COLOR: '1',
          },
          ...(input !== undefined ? { input } : {}),
        },
      );
    const login = await run(['auth', 'login', '--base-url', fx.mock.url, '--with-token'], TOKEN);
    expect(login.exitCode, String(login.stderr)).toBe(0);
    const stored = readFileSync(trace, 'utf8');
    const lookup = await run(['modalities', '--json', '--no-cache']);
    expect(lookup.exitCode, String(lookup.stderr)).toBe(0);
    const read = readFileSync(trace, 'utf8');
    for (const log of [stored, read]) {
      // The helper was started (so the check below looked at its argv), without the token.
      expect(log).toMatch(/execve\([^\n]*"-e"/);
      expect(log).not.toContain(TOKEN);
    }
  });

  it('moves a token kept in the file into the keychain at the next login', async () => {
    const first = await imaging(
      ['auth', 'login', '--base-url', fx.mock.url, '--with-token', '--insecure-storage'],
      {},
      TOKEN,
    );
    expect(first.exitCode).toBe(0);
    expect(String(first.stderr)).toContain('kept in the config file');
    expect(config()).toContain(TOKEN);
    expect((await imaging(['modalities', '--json', '--no-cache'])).exitCode).toBe(0);
    const again = await imaging(['auth', 'login', '--base-url', fx.mock.url, '--with-token'], {}, TOKEN);
    expect(again.exitCode).toBe(0);
    expect(config()).not.toContain(TOKEN);
    expect(keychainRead(`local ${fx.mock.url}`, service.env)).toBe(TOKEN);
    await imaging(['auth', 'logout']);
  });

  it('without a keychain, keeps the token in the file and says so in one line', async () => {
    const r = await imaging(
      ['auth', 'login', '--base-url', fx.mock.url, '--with-token'],
      { DBUS_SESSION_BUS_ADDRESS: '' },
      TOKEN,
    );
    expect(r.exitCode).toBe(0);
    const notes = String(r.stderr)
      .split('\n')
      .filter((l) => l.includes('no OS keychain took the token'));
    expect(notes).toHaveLength(1);
    expect(config()).toContain(TOKEN);
  });

  it('a keychain that cannot be read is one clear error, exit 3, and nothing is sent', async () => {
    await imaging(['auth', 'login', '--base-url', fx.mock.url, '--with-token'], {}, TOKEN);
    const before = fx.mock.requests.length;
    const r = await imaging(['modalities', '--no-cache'], { DBUS_SESSION_BUS_ADDRESS: '' }, undefined, true);
    expect(r.exitCode).toBe(3);
    expect(String(r.stderr)).toMatch(
      /^error: the local token is kept in the OS keychain, which could not be read/,
    );
    expect(String(r.stderr)).toContain('--insecure-storage');
    expect(String(r.stderr)).not.toMatch(/\n\s+at /);
    expect(fx.mock.requests.length).toBe(before);
    await imaging(['auth', 'logout']);
  });
});
