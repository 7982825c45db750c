import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, piped } from '../../fake-io.js';
import { tempDir } from '../../helpers.js';

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.cleanup());

describe('imaging cache path', () => {
  it('prints the folder of cached reference answers, the same in both forms', async () => {
    const { terminal, piped: p } = await bothForms(['cache', 'path'], {
      env: { IMAGING_CACHE_DIR: dir.path },
    });
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${join(dir.path, 'reference')}\n`);
      expect(r.stderr).toBe('');
    }
  });

  it('with no usable cache folder, says how to name one (exit 1)', async () => {
    const { terminal, piped: p } = await bothForms(['cache', 'path'], { env: {} });
    expect(p.code).toBe(1);
    expect(p.stdout).toBe('');
    expect(p.stderr).toBe(
      'error: there is no cache folder on this system\nhint: Set IMAGING_CACHE_DIR to an absolute path (no cache is kept on Windows).\n',
    );
    expect(terminal.code).toBe(1);
    expect(terminal.stderr).toContain('\u001b[');
  });

  it('takes no argument', async () => {
    expectUsageError(
      await piped(['cache', 'path', 'x'], { env: { IMAGING_CACHE_DIR: dir.path } }),
      /argument/,
      0,
    );
  });
});
