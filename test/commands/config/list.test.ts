import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothForms, expectTableForms, expectUsageError, piped } from '../../fake-io.js';
import { tempDir } from '../../helpers.js';

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.cleanup());
const env = () => ({ IMAGING_CONFIG_DIR: dir.path, IMAGING_ENV: 'local' });

describe('imaging config list', () => {
  it('says where the file will be when nothing is stored yet (exit 0, nothing on stdout)', async () => {
    const { terminal, piped: p } = await bothForms(['config', 'list'], { env: env() });
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`Nothing is stored yet (${join(dir.path, 'config.json')}).\n`);
    }
  });

  it('shows stored settings as a table in both forms, and as JSON', async () => {
    expect((await piped(['config', 'set', 'base-url', 'http://127.0.0.1:9/'], { env: env() })).code).toBe(0);
    expect((await piped(['config', 'set', 'env', 'sandbox'], { env: env() })).code).toBe(0);
    const forms = await bothForms(['config', 'list'], { env: env() });
    expectTableForms(forms, ['KEY', 'ENVIRONMENT', 'VALUE'], ['env', 'base-url']);
    expect(forms.piped.stdout).toMatch(/^base-url +local +http:\/\/127\.0\.0\.1:9$/m);
    const json = JSON.parse((await piped(['config', 'list', '--json'], { env: env() })).stdout);
    expect(json).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: 'base-url', environment: 'local', value: 'http://127.0.0.1:9' }),
      ]),
    );
  });

  it('takes no argument', async () => {
    expectUsageError(await piped(['config', 'list', 'extra'], { env: env() }), /argument/, 0);
  });
});
