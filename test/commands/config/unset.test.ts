import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, piped } from '../../fake-io.js';
import { tempDir } from '../../helpers.js';

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.cleanup());
const env = () => ({ IMAGING_CONFIG_DIR: dir.path, IMAGING_ENV: 'local' });

describe('imaging config unset', () => {
  it('removes a stored value and says so, in both forms; unsetting again is not an error', async () => {
    await piped(['config', 'set', 'base-url', 'http://127.0.0.1:9/'], { env: env() });
    const { terminal, piped: p } = await bothForms(['config', 'unset', 'base-url'], { env: env() });
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe('base-url for local unset.\n');
    }
    const list = await piped(['config', 'list', '--json'], { env: env() });
    expect(list.stdout).not.toContain('http://127.0.0.1:9');
  });

  it('refuses an unknown key or none, before writing', async () => {
    expectUsageError(
      await piped(['config', 'unset', 'colour'], { env: env() }),
      /unknown config key "colour"/,
      0,
    );
    expectUsageError(await piped(['config', 'unset'], { env: env() }), /missing required argument 'key'/, 0);
  });
});
