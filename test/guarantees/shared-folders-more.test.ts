import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN, cli, mockFixture, tempDir } from '../helpers.js';

/**
 * A folder is shared when it is owned by another user (not root) or writable by its group or by
 * others, even when that group is my primary group: there another user's symlink, FIFO or file is
 * refused before any request. Recreated with real users (nobody, daemon) and a real group.
 */

const NOBODY = 65534;
const DAEMON = 1;
const GROUP = 'imgsharegrp';
const isRoot = process.getuid?.() === 0;
const hasTools = ['setpriv', 'groupadd'].every(
  (t) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0,
);
const ok = isRoot && hasTools;
const skipNote = ok ? '' : ' (skipped: needs root, setpriv and groupadd)';
const as = (uid: number, gid: number, ...cmd: string[]) =>
  execFileSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', ...cmd]);

const fx = mockFixture({ referrals: 20 });
let dir: ReturnType<typeof tempDir>;
let gid = 0;
let madeGroup = false;
beforeAll(async () => {
  await fx.start();
  if (!ok) return;
  if (spawnSync('getent', ['group', GROUP]).status !== 0) {
    execFileSync('groupadd', [GROUP]);
    madeGroup = true;
  }
  gid = Number(String(execFileSync('getent', ['group', GROUP])).split(':')[2]);
});
afterAll(async () => {
  await fx.stop();
  if (madeGroup) spawnSync('groupdel', [GROUP]);
});
beforeEach(() => {
  fx.reset();
  dir = tempDir();
  chmodSync(dir.path, 0o755);
  return () => dir.cleanup();
});

describe.skipIf(!ok)(`an export into a folder shared without being world-writable${skipNote}`, () => {
  /** nobody's own 0755 folder, as /tmp/nobdir. */
  function nobodysFolder(): string {
    const folder = join(dir.path, 'nobdir');
    mkdirSync(folder, { mode: 0o755 });
    chownSync(folder, NOBODY, NOBODY);
    return folder;
  }

  it("nobody's symlink to root's 0600 file in nobody's 0755 folder: exit 2, the file untouched", async () => {
    const secret = join(dir.path, 'secret');
    writeFileSync(secret, 'root only\n', { mode: 0o600 });
    const target = join(nobodysFolder(), 'daily.csv');
    as(NOBODY, NOBODY, 'ln', '-s', secret, target);
    // In-process: refused before any request (the same checks on the same files); the real binary
    // runs as another user below.
    const r = await cli(false, ['referrals', 'export', '-o', target], { env: fx.env() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('is a symlink owned by nobody');
    expect(r.stderr).toContain("following the kernel's fs.protected_symlinks rule");
    expect(r.stderr).not.toContain("shell's >");
    expect(fx.apiRequests()).toEqual([]);
    expect(readFileSync(secret, 'utf8')).toBe('root only\n');
  });

  it("nobody's FIFO in nobody's 0755 folder: exit 2 before any request", async () => {
    const target = join(nobodysFolder(), 'daily.csv');
    as(NOBODY, NOBODY, 'mkfifo', target);
    const r = await cli(false, ['referrals', 'export', '-o', target], { env: fx.env() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('is a named pipe (FIFO) owned by nobody');
    expect(r.stderr).toContain('fs.protected_fifos');
    expect(fx.apiRequests()).toEqual([]);
    expect(lstatSync(target).isFIFO()).toBe(true);
  });

  it("a 0775 folder of my primary group: nobody's symlink to my 0600 file is refused", async () => {
    // daemon and nobody share the group, the primary group of both.
    const folder = join(dir.path, 'team');
    mkdirSync(folder, { mode: 0o775 });
    chmodSync(folder, 0o775);
    chownSync(folder, DAEMON, gid);
    const home = join(dir.path, 'daemon-home');
    mkdirSync(home, { mode: 0o700 });
    chownSync(home, DAEMON, gid);
    const secret = join(home, 'secret');
    writeFileSync(secret, 'daemon only\n', { mode: 0o600 });
    chownSync(secret, DAEMON, gid);
    const target = join(folder, 'daily.csv');
    as(NOBODY, gid, 'ln', '-s', secret, target);
    const config = join(dir.path, 'config');
    mkdirSync(config, { mode: 0o700 });
    chownSync(config, DAEMON, gid);
    const r = await execa(
      'setpriv',
      [
        `--reuid=${DAEMON}`,
        `--regid=${gid}`,
        '--clear-groups',
        process.execPath,
        BIN,
        'referrals',
        'export',
        '-o',
        target,
      ],
      {
        reject: false,
        extendEnv: false,
        env: { ...fx.env(), IMAGING_CONFIG_DIR: config, NO_COLOR: '1', IMAGING_KEYCHAIN: 'off' },
      },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('is a symlink owned by nobody');
    expect(fx.apiRequests()).toEqual([]);
    expect(readFileSync(secret, 'utf8')).toBe('daemon only\n');
  });
});
