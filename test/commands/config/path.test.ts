import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, piped } from '../../fake-io.js';
import { tempDir } from '../../helpers.js';

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.cleanup());

describe('imaging config path', () => {
  it('prints the config file path alone, the same in both forms, even before it exists', async () => {
    const { terminal, piped: p } = await bothForms(['config', 'path'], {
      env: { IMAGING_CONFIG_DIR: dir.path },
    });
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${join(dir.path, 'config.json')}\n`);
      expect(r.stderr).toBe('');
    }
  });

  it('takes no argument', async () => {
    expectUsageError(
      await piped(['config', 'path', 'x'], { env: { IMAGING_CONFIG_DIR: dir.path } }),
      /argument/,
      0,
    );
  });
});
