import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../src/fs/write-file.js';
import { BIN, cli, mockFixture, mountTmpfs, run, spawnCli, tempDir } from '../helpers.js';
import '../reliability.js';

/**
 * A full disk never leaves a half-written file: the write module's files (the config store, any
 * file written whole) keep their old content, and no temporary or lock file is left behind.
 * Recreated on a real tmpfs of 64 KiB (mounting needs root; CI runs as root). Exports onto a full
 * disk are proved in test/guarantees/output-targets.test.ts and resume.test.ts.
 */

const disk = mountTmpfs('fulldisk', 'size=64k,mode=0700');

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
      // A full tmpfs may still give a stray page to a new file: take those until a write is refused.
      let refused: unknown;
      for (let i = 0; i < 16 && !refused; i++) {
        try {
          writeFileSync(join(disk.path, `stray-${i}`), Buffer.alloc(4096, 1));
        } catch (err) {
          refused = err;
        }
      }
      expect(String(refused)).toMatch(/ENOSPC/);
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

describe.skipIf(disk.error !== undefined)(
  `a full disk (a real 256 KiB tmpfs${disk.error ? `; skipped: cannot mount one: ${disk.error}` : ''})`,
  () => {
    /**
     * Exports onto a full file system (a real tmpfs of 256 KiB): the real binary where the disk fills
     * under it and for its standard output; the other cases in-process (the same code writing to the
     * same full disk).
     */
    const big = mockFixture({ referrals: 3000 }); // ~1 MiB of CSV: more than the tmpfs holds
    const small = mockFixture({ referrals: 250 }); // pages of 100, 100, 50: the last one short
    let smallReference = ''; // the complete export of `small`, as written to an ordinary file
    const STACK = /\n\s+at .+:\d+:\d+/;

    beforeAll(async () => {
      await Promise.all([big.start(), small.start()]);
      const d = tempDir();
      try {
        // In-process: the same code as the binary's, the file the tests below size the disk by. (`big`
        // is not exported here: were it smaller than the disk, the exports of it below would not fail.)
        const r = await run(['referrals', 'export', '-o', join(d.path, 'small.csv')], { env: small.env() });
        expect(r.code).toBe(0);
        smallReference = readFileSync(join(d.path, 'small.csv'), 'utf8');
      } finally {
        d.cleanup();
      }
    });

    afterAll(() => Promise.all([big.stop(), small.stop()]));

    const disk = mountTmpfs('export', 'size=256k,mode=0755');

    /** Runs the binary with its stdout on a given descriptor. */
    function runWithStdout(args: string[], stdout: number | 'pipe', env: NodeJS.ProcessEnv) {
      return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], {
          env: { ...env, PATH: process.env.PATH },
          stdio: ['ignore', stdout, 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout?.on('data', (d) => (out += d));
        child.stderr!.on('data', (d) => (err += d));
        child.on('close', (code) => resolve({ code, stdout: out, stderr: err }));
      });
    }

    afterEach(() => {
      for (const f of readdirSync(disk.path)) rmSync(join(disk.path, f), { recursive: true, force: true });
    });
    afterAll(() => {
      execFileSync('umount', [disk.path]);
      rmSync(join(disk.path, '..'), { recursive: true, force: true });
    });

    it('an export bigger than the disk: exit 1 naming the target, no file, no temporary file or folder', async () => {
      const target = join(disk.path, 'referrals.csv');
      const r = await spawnCli(['referrals', 'export', '-o', target], { env: big.env() });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`error: cannot write ${target}: no space left on the device`);
      expect(r.stderr).not.toContain('.partial');
      expect(r.stderr).not.toContain('Exported');
      expect(r.stderr).not.toMatch(STACK);
      expect(readdirSync(disk.path)).toEqual([]);
    });

    it('the disk fills up during the last, short page: still exit 1 and nothing left', async () => {
      // Leave room for all but 6-10 KB of the export: the last page (50 referrals, ~16 KB) is cut.
      const free = () => {
        const s = statfsSync(disk.path);
        return s.bavail * s.bsize;
      };
      const room = Math.floor((smallReference.length - 6000) / 4096) * 4096;
      writeFileSync(join(disk.path, 'filler'), Buffer.alloc(free() - room));
      expect(free()).toBe(room);
      const lastPage = smallReference.length - smallReference.split('\r\n').slice(0, 201).join('\r\n').length;
      expect(smallReference.length - room).toBeLessThan(lastPage);
      const target = join(disk.path, 'referrals.csv');
      const r = await cli(false, ['referrals', 'export', '-o', target], { env: small.env() });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`error: cannot write ${target}: no space left on the device`);
      expect(r.stderr).not.toContain('Exported');
      expect(readdirSync(disk.path)).toEqual(['filler']);
    });

    it('a file already at the target stays untouched', async () => {
      const target = join(disk.path, 'referrals.csv');
      writeFileSync(target, 'the previous export\n');
      const r = await cli(false, ['referrals', 'export', '-o', target], { env: big.env() });
      expect(r.exitCode).toBe(1);
      expect(readFileSync(target, 'utf8')).toBe('the previous export\n');
      expect(readdirSync(disk.path)).toEqual(['referrals.csv']);
    });

    it('a read-only file system: exit 2 before any request, naming the target and the reason', async () => {
      const ro = join(disk.path, '..', 'ro');
      mkdirSync(ro);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,ro', 'tmpfs', ro]);
      try {
        big.reset();
        const target = join(ro, 'referrals.csv');
        const r = await cli(false, ['referrals', 'export', '-o', target], { env: big.env() });
        expect(r.exitCode).toBe(2);
        expect(r.stderr).toContain(`error: cannot write ${target}: read-only file system`);
        expect(r.stderr).not.toContain('.partial');
        expect(big.apiRequests()).toEqual([]);
      } finally {
        execFileSync('umount', [ro]);
      }
    });

    it('standard output onto the full disk: one clear error, exit 1, no stack trace', async () => {
      const fd = openSync(join(disk.path, 'out.csv'), 'w');
      try {
        const r = await runWithStdout(['referrals', 'export'], fd, big.env());
        expect(r.code).toBe(1);
        expect(r.stderr).toContain('error: cannot write standard output: no space left on the device');
        expect(r.stderr).not.toMatch(STACK);
        expect(r.stderr).not.toContain('Exported');
      } finally {
        closeSync(fd);
      }
    });
  },
);
