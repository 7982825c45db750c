import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, onTerminal, piped } from '../../fake-io.js';
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
const env = () => ({ IMAGING_CONFIG_DIR: cfg.path, IMAGING_ENV: 'local' });

describe('imaging auth logout', () => {
  it('forgets the stored token and keeps the base URL; a second logout has nothing to do', async () => {
    const login = await piped(['auth', 'login', '--with-token', '--base-url', fx.mock.url], {
      env: env(),
      stdin: 'mock-logout-TOKEN-1234\n',
    });
    expect(login.code).toBe(0);
    const t = await onTerminal(['auth', 'logout'], { env: env() });
    expect(t.code).toBe(0);
    expect(t.stdout).toBe('');
    expect(t.stderr).not.toContain('mock-logout-TOKEN');
    expect(t.stderr).toMatch(/local/);
    const stored = JSON.parse(readFileSync(join(cfg.path, 'config.json'), 'utf8')).environments.local;
    expect(stored.token).toBeUndefined();
    expect(stored.base_url).toBe(fx.mock.url);
    const p = await piped(['auth', 'logout'], { env: env() });
    expect(p.code).toBe(0);
    expect(p.stderr).toBe('No token is stored for local; nothing to do.\n');
  });

  it('takes no argument', async () => {
    expectUsageError(
      await piped(['auth', 'logout', 'local'], { env: env() }),
      /argument/,
      fx.apiRequests().length,
    );
  });
});
