import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectUsageError, onTerminal, piped } from '../../fake-io.js';
import { mockFixture, tempDir } from '../../helpers.js';

const fx = mockFixture();
let dir: ReturnType<typeof tempDir>;
beforeAll(async () => {
  dir = tempDir();
  await fx.start();
});
afterAll(async () => {
  await fx.stop();
  dir.cleanup();
});
beforeEach(() => fx.reset());
const env = () => fx.env({ IMAGING_CACHE_DIR: dir.path });
const entries = () => {
  const folder = join(dir.path, 'reference');
  return existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith('.json')) : [];
};

describe('imaging cache clear', () => {
  it('deletes every cached answer and counts them, in both forms; the next lookup asks the API again', async () => {
    await piped(['modalities'], { env: env() });
    await piped(['cpt', '73721'], { env: env() });
    expect(entries()).toHaveLength(2);
    const t = await onTerminal(['cache', 'clear'], { env: env() });
    expect(t.code).toBe(0);
    expect(t.stdout).toBe('');
    expect(t.stderr).toBe('Removed 2 cached answers.\n');
    expect(entries()).toEqual([]);
    await piped(['modalities'], { env: env() });
    const p = await piped(['cache', 'clear'], { env: env() });
    expect(p.code).toBe(0);
    expect(p.stderr).toBe('Removed 1 cached answer.\n');
    expect(fx.apiRequests().map((r) => r.path)).toEqual([
      '/api/v2/modalities',
      '/api/v2/cpt_codes?code=73721',
      '/api/v2/modalities',
    ]);
  });

  it('takes no argument', async () => {
    expectUsageError(
      await piped(['cache', 'clear', 'all'], { env: env() }),
      /argument/,
      fx.apiRequests().length,
    );
  });
});
