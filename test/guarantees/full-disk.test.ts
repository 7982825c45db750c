import { execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/fs/write-file.js';
import { spawnCli, tmpfsFolder } from '../helpers.js';

/**
 * A full disk never leaves a half-written file: the write module's files (the config store, any
 * file written whole) keep their old content, and no temporary or lock file is left behind.
 * Recreated on a real tmpfs of 64 KiB (mounting needs root; CI runs as root). Exports onto a full
 * disk are proved in test/guarantees/output-targets.test.ts and resume.test.ts.
 */

function mountTmpfs(): { path: string; error?: string } {
  const path = join(tmpfsFolder('fulldisk').path, 'disk');
  mkdirSync(path);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', path], { stdio: 'pipe' });
    return { path };
  } catch (err) {
    rmSync(join(path, '..'), { recursive: true, force: true });
    return { path, error: String((err as { stderr?: Buffer }).stderr ?? err).trim() };
  }
}

const disk = mountTmpfs();

/** Fills the disk, leaving `room` bytes (rounded to pages) free. */
function fill(room = 0): void {
  const fd = openSync(join(disk.path, 'filler'), 'w');
  const page = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, page);
  } catch {
    // full
  } finally {
    closeSync(fd);
  }
  if (room > 0) {
    const size = readFileSync(join(disk.path, 'filler')).length;
    execFileSync('truncate', ['-s', String(Math.max(0, size - room)), join(disk.path, 'filler')]);
  }
}

describe.skipIf(disk.error !== undefined)(
  `a full disk (a real 64 KiB tmpfs${disk.error ? `; skipped: cannot mount one: ${disk.error}` : ''})`,
  () => {
    afterEach(() => {
      for (const f of readdirSync(disk.path)) rmSync(join(disk.path, f), { recursive: true, force: true });
    });
    afterAll(() => {
      execFileSync('umount', [disk.path]);
      rmSync(join(disk.path, '..'), { recursive: true, force: true });
    });

    it('a file written whole keeps its old content when the disk fills part-way; no temporary file left', () => {
      const target = join(disk.path, 'data.json');
      writeFileSync(target, 'old\n');
      fill(8192);
      expect(() => writeFileAtomic(target, Buffer.alloc(32 * 1024, 0x61))).toThrow(/ENOSPC/);
      expect(readFileSync(target, 'utf8')).toBe('old\n');
      expect(readdirSync(disk.path).sort()).toEqual(['data.json', 'filler']);
    });

    it('`config set` on a full disk: exit 1 saying so, the config as it was, no temporary or lock file', async () => {
      const cfg = join(disk.path, 'cfg');
      mkdirSync(cfg, { mode: 0o700 });
      // Three pages of it (a key of a newer version, kept as it is): more than any stray page a full tmpfs may still give.
      const before = JSON.stringify({ env: 'local', newer: 'x'.repeat(12_000) });
      writeFileSync(join(cfg, 'config.json'), before, { mode: 0o600 });
      fill();
      expect(() => writeFileSync(join(disk.path, 'probe'), 'x')).toThrow(/ENOSPC/);
      rmSync(join(disk.path, 'probe'), { force: true });
      const r = await spawnCli(['config', 'set', 'base-url', 'https://sandbox.example.com'], {
        env: { IMAGING_CONFIG_DIR: cfg },
      });
      expect(r.exitCode, `${r.stderr} ${readdirSync(cfg).join(' ')}`).toBe(1);
      expect(r.stderr).toContain(
        `cannot write the config file ${join(cfg, 'config.json')}: no space left on the device`,
      );
      expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(readFileSync(join(cfg, 'config.json'), 'utf8')).toBe(before);
      expect(readdirSync(cfg)).toEqual(['config.json']);
    });
  },
);
