import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KEYCHAIN_TIMEOUT_MS,
  KeychainUnavailable,
  keychainRead,
  keychainRemove,
  keychainStore,
} from '../../src/config/keychain.js';
import { type SecretService, secretServiceMissing, startSecretService } from '../keychain-service.js';

const missing = secretServiceMissing();
if (missing) console.log(`keychain: the Secret Service tests are skipped: ${missing}`);

describe.skipIf(missing)('the OS keychain, against a real Secret Service', () => {
  let service: SecretService;
  beforeAll(async () => {
    service = await startSecretService();
  });
  afterAll(() => service?.stop());

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
    const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: '', HOME: dir };
    expect(() => keychainStore('sandbox x', 'tok', env)).toThrow(KeychainUnavailable);
  });

  it('gives up on a keychain that never answers, in its time limit', async () => {
    const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'bus')}` };
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
