import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mockFixture, run, tempDir } from '../helpers.js';

/**
 * The reference cache deletes only what it wrote. Seen: the sweep after a new entry removed every
 * `*.json` older than 25 hours in the cache's `reference/` folder, and `imaging cache clear` every
 * `*.json`, a user's report.json or backup.json included. Real files in a real cache folder.
 */

const fx = mockFixture();
const root = tempDir('imaging-cache-foreign-');
beforeAll(() => fx.start());
afterAll(async () => {
  await fx.stop();
  root.cleanup();
});

const HOUR = 3_600_000;
const old = (file: string, hours: number) => {
  const t = new Date(Date.now() - hours * HOUR);
  utimesSync(file, t, t);
};

it('the sweep and `cache clear` remove our entries and temporary files, never a report.json, a backup.json or a notes.txt', async () => {
  const cacheDir = join(root.path, 'c');
  const dir = join(cacheDir, 'reference');
  const env = fx.env({ IMAGING_CACHE_DIR: cacheDir });
  expect((await run(['modalities'], { env })).code).toBe(0);
  const [ours] = readdirSync(dir);
  expect(ours).toMatch(/^[0-9a-f]{64}\.json$/);
  old(join(dir, ours!), 26); // past every time limit: the sweep's to remove
  const foreign = {
    'report.json': 0,
    'backup.json': 30,
    'notes.txt': 30,
    '.tmp-backup.json': 30,
    'ABCDEF.json': 30,
  };
  for (const [name, hours] of Object.entries(foreign)) {
    writeFileSync(join(dir, name), '{"mine": true}\n', { mode: 0o600 });
    old(join(dir, name), hours);
  }
  // A folder named as an entry is not a file of ours either.
  const folderLikeEntry = join(dir, `${'a'.repeat(64)}.json`);
  mkdirSync(folderLikeEntry);
  old(folderLikeEntry, 30);
  const tmp = join(dir, '.tmp-4242-k3j2h1'); // a temporary file a killed run left, 2 hours old
  writeFileSync(tmp, 'x', { mode: 0o600 });
  old(tmp, 2);

  // A new entry is written: the sweep runs.
  expect((await run(['cpt', '73721'], { env })).code).toBe(0);
  expect(existsSync(join(dir, ours!))).toBe(false);
  expect(existsSync(tmp)).toBe(false);
  const afterSweep = readdirSync(dir);
  for (const name of Object.keys(foreign)) expect(afterSweep).toContain(name);
  expect(afterSweep).toContain(`${'a'.repeat(64)}.json`);
  const entries = afterSweep.filter((f) => /^[0-9a-f]{64}\.json$/.test(f) && f !== `${'a'.repeat(64)}.json`);
  expect(entries).toHaveLength(1); // the cpt answer

  const clear = await run(['cache', 'clear'], { env });
  expect(clear.code, clear.stderr).toBe(0);
  expect(clear.stderr).toBe('Removed 1 cached answer.\n');
  expect(readdirSync(dir).sort()).toEqual([...Object.keys(foreign), `${'a'.repeat(64)}.json`].sort());
});
