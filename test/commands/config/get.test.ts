import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, piped } from '../../fake-io.js';
import { tempDir } from '../../helpers.js';

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
    expect(unknown.stderr).toContain('Known keys: env, base-url, path.payments, path.notifications');
    expectUsageError(
      await piped(['config', 'get', 'token'], { env: env() }),
      /the token is not a config value/,
      0,
    );
    expectUsageError(await piped(['config', 'get'], { env: env() }), /missing required argument 'key'/, 0);
  });
});
