import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cli, run, tempDir, testServer } from '../helpers.js';

/**
 * A webhook signing secret is read only from a file that is the user's alone, as ssh reads a key
 * file: another user's file, a file others may write, or another user's symlink is refused
 * (exit 2, naming the owner and the fix) before anything is signed or sent.
 */

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;
const ok = isRoot && hasSetpriv;
const skipNote = ok ? '' : ' (skipped: needs root and setpriv to act as nobody)';

let receiver: Awaited<ReturnType<typeof testServer>>;
let dir: ReturnType<typeof tempDir>;
beforeAll(async () => {
  receiver = await testServer((_req, res) => res.end('ok'));
});
afterAll(() => receiver.close());
beforeEach(() => {
  receiver.seen.length = 0;
  dir = tempDir();
  chmodSync(dir.path, 0o755);
  return () => dir.cleanup();
});

// The real binary sends with my own file; the refusals (before anything is sent) run in-process, the
// same checks on the same files.
const send = (secretFile: string, real = false) =>
  cli(real, [
    'webhook',
    'send',
    'visit.status_changed',
    '--to',
    `${receiver.url}/hook`,
    '--secret-file',
    secretFile,
  ]);

function mySecret(mode = 0o600): string {
  const file = join(dir.path, 'secret');
  writeFileSync(file, 'whsec_test_secret\n', { mode });
  chmodSync(file, mode);
  return file;
}

describe.skipIf(!ok)(`--secret-file trusted as ssh trusts a key file${skipNote}`, () => {
  it('my own 0600 file is used', async () => {
    const r = await send(mySecret(), true);
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(receiver.seen).toHaveLength(1);
  });

  it("another user's file: exit 2, naming the owner and the fix, nothing sent", async () => {
    const file = mySecret();
    chownSync(file, NOBODY, NOBODY);
    const r = await send(file);
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain(`--secret-file ${file} is a file owned by nobody`);
    expect(String(r.stderr)).toContain('chmod 600');
    expect(receiver.seen).toEqual([]);
  });

  it('a file others may write: exit 2, nothing sent', async () => {
    const file = mySecret(0o666);
    const r = await send(file);
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('is writable by other users');
    expect(receiver.seen).toEqual([]);
  });

  it("another user's symlink to my secret: exit 2, nothing sent", async () => {
    const file = mySecret();
    const shared = join(dir.path, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const link = join(shared, 'secret');
    execFileSync('setpriv', [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      'ln',
      '-s',
      file,
      link,
    ]);
    const r = await send(link);
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('is a symlink owned by nobody');
    expect(receiver.seen).toEqual([]);
  });
});

/** `imaging api -F key=@file` reads a field from a file under the same rule: another user's is refused. */
describe.skipIf(!ok)(`-F key=@file trusted as the secret file is${skipNote}`, () => {
  const env = () => ({
    IMAGING_ENV: 'local',
    IMAGING_BASE_URL: receiver.url,
    IMAGING_CONFIG_DIR: '/nonexistent',
  });
  const asNobody = (...argv: string[]) =>
    execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...argv]);

  it("another user's file in a shared folder, or another user's symlink: exit 2, nothing sent", async () => {
    const shared = join(dir.path, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const theirs = join(shared, 'note.json');
    asNobody('sh', '-c', `echo planted > ${theirs}`);
    const mine = join(dir.path, 'mine.json');
    writeFileSync(mine, 'mine', { mode: 0o600 });
    const link = join(shared, 'link.json');
    asNobody('ln', '-s', mine, link);
    for (const [file, why] of [
      [theirs, 'is a file owned by nobody'],
      [link, 'is a symlink owned by nobody'],
    ] as const) {
      const r = await run(['api', 'POST', '/notes', '-F', `note=@${file}`], { env: env() });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`-F note ${file} ${why}`);
      expect(receiver.seen).toEqual([]);
    }
    const own = await run(['api', 'POST', '/notes', '-F', `note=@${mine}`], { env: env() });
    expect(own.code, own.stderr).toBe(0);
    expect(receiver.seen).toHaveLength(1);
  });

  it("api --input, referrals update --file and create --file: another user's file is refused, its text never shown", async () => {
    const shared = join(dir.path, 'shared-body');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const theirs = join(shared, 'body.json');
    asNobody('sh', '-c', `echo 'not json: planted-secret' > ${theirs}`);
    receiver.seen.length = 0;
    for (const argv of [
      ['api', 'POST', '/notes', '--input', theirs],
      ['referrals', 'update', '00000000-0000-4000-8000-000000000001', '--file', theirs, '--dry-run'],
      ['referrals', 'create', '--file', theirs, '--dry-run'],
    ]) {
      const r = await run(argv, { env: env() });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `${theirs} is a file owned by nobody; it is read only from a file of your own`,
      );
      expect(r.stdout + r.stderr).not.toContain('planted-secret');
    }
    expect(receiver.seen).toEqual([]);
  });
});
