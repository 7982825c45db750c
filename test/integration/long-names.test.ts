import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import '../reliability.js';
import { parseFault } from '../../src/emulator/faults.js';
import { hiddenName, NAME_MAX } from '../../src/util/hidden-name.js';
import { mockFixture, run, spawnCli, tempDir } from '../helpers.js';

/**
 * Target names of 234-255 bytes are valid file names, but `.NAME.<hex>.partial` and
 * `.NAME.checkpoint` beside them are not: exporting to them failed with a raw ENAMETOOLONG.
 * Recreated with real names of those lengths on the real file system.
 */

const fx = mockFixture({ referrals: 60 });
beforeAll(async () => {
  await fx.start();
  configureSandbox(fx.configDir, fx.mock.url);
});
afterAll(() => fx.stop());
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  fx.reset();
  fx.mock.faults.clear();
  dir = tempDir();
});
afterEach(() => dir.cleanup());

const sandbox = () => fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-long-names' });
/** A name of exactly `bytes` bytes ending in `.csv`. */
const nameOf = (bytes: number, fill = 'd') => `${fill.repeat(bytes - 4)}.csv`;

describe('exporting to a file name of 234-255 bytes', () => {
  it('the binary exports to a 240-byte name that already exists, replacing it (the reported case)', async () => {
    const target = join(dir.path, nameOf(240));
    writeFileSync(target, 'old\n');
    const r = await spawnCli(['referrals', 'export', '--per-page', '20', '-o', target], { env: sandbox() });
    expect(r.stderr).not.toMatch(/ENAMETOOLONG|name too long/);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(target, 'utf8').split('\n').filter(Boolean)).toHaveLength(61);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir.path)).toEqual([nameOf(240)]);
  });

  it.for([234, 250, 255])('a %d-byte name: exported, nothing else left beside it', async (bytes) => {
    const target = join(dir.path, nameOf(bytes));
    const r = await run(['referrals', 'export', '--per-page', '20', '-o', target], { env: sandbox() });
    expect(r.stderr).not.toMatch(/ENAMETOOLONG|name too long/);
    expect(r.code).toBe(0);
    expect(readdirSync(dir.path)).toEqual([nameOf(bytes)]);
  });

  it('a stopped export keeps its checkpoint under a short hidden name, and --resume finds it', async () => {
    const name = nameOf(250, 'e');
    const target = join(dir.path, name);
    const args = ['referrals', 'export', '--per-page', '10', '--concurrency', '1', '-o', target];
    fx.mock.faults.add(parseFault('500:*@3', '/api/v2/referrals'));
    const failed = await run(args, { env: sandbox() });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('3 complete pages (30 referrals) are kept in a checkpoint');
    const left = readdirSync(dir.path);
    expect(left).toHaveLength(1);
    const [cp] = left as [string];
    // Hidden, never named like the finished file, short, and the one `hiddenName` gives.
    expect(cp).toBe(hiddenName(name, '.checkpoint'));
    expect(cp).toMatch(/^\.e{40}~[0-9a-f]{16}\.checkpoint$/);
    expect(Buffer.byteLength(cp)).toBeLessThanOrEqual(NAME_MAX);
    expect(failed.stderr).toContain(cp);
    fx.mock.faults.clear();
    const resumed = await run([...args, '--resume'], { env: sandbox() });
    expect(resumed.stderr).toContain('Continued from the checkpoint: 3 pages saved earlier');
    expect(resumed.code).toBe(0);
    expect(readFileSync(target, 'utf8').split('\n').filter(Boolean)).toHaveLength(61);
    expect(readdirSync(dir.path)).toEqual([name]);
  });

  it('a multi-byte name is cut between characters, never inside one', () => {
    const name = `${'é'.repeat(120)}.csv`; // 244 bytes
    const hidden = hiddenName(name, '.0123456789ab.partial');
    expect(Buffer.byteLength(hidden)).toBeLessThanOrEqual(NAME_MAX);
    expect(hidden).toMatch(/^\.é{20}~[0-9a-f]{16}\.0123456789ab\.partial$/);
    // Deterministic, and different names give different hidden names.
    expect(hiddenName(name, '.checkpoint')).toBe(hiddenName(name, '.checkpoint'));
    expect(hiddenName(`${'é'.repeat(120)}.tsv`, '.checkpoint')).not.toBe(hiddenName(name, '.checkpoint'));
    // A name short enough keeps the plain form.
    expect(hiddenName('out.csv', '.checkpoint')).toBe('.out.csv.checkpoint');
  });

  it('a name over 255 bytes is exit 2 before any request, naming the target and the limit', async () => {
    const target = join(dir.path, nameOf(256));
    const r = await spawnCli(['referrals', 'export', '-o', target], { env: sandbox() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `cannot write ${target}: its file name is 256 bytes long, and a file name can be at most 255 bytes`,
    );
    expect(r.stderr).not.toMatch(/ENAMETOOLONG|\n\s+at /);
    expect(fx.apiRequests()).toEqual([]);
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('a folder name over 255 bytes in the path is said plainly too', async () => {
    const target = join(dir.path, 'f'.repeat(300), 'out.csv');
    const r = await spawnCli(['referrals', 'export', '-o', target], { env: sandbox() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `cannot write ${target}: the name is too long (a file name can be at most 255 bytes`,
    );
    expect(r.stderr).not.toContain('ENAMETOOLONG');
  });
});

/** The sandbox's configured base URL is the emulator's: there checkpoints are kept by default. */
function configureSandbox(configDir: string, url: string): void {
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  writeFileSync(
    join(configDir, 'config.json'),
    JSON.stringify({ environments: { sandbox: { base_url: url } } }),
    { mode: 0o600 },
  );
}
