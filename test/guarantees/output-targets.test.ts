import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AtomicFile } from '../../src/export/output-file.js';
import { BIN, cli, launcher, mockFixture, run, spawnCli, tempDir } from '../helpers.js';
import '../reliability.js';
import { execa } from 'execa';
import { parseFault } from '../../src/emulator/faults.js';
import { hiddenName, NAME_MAX } from '../../src/util/hidden-name.js';

/**
 * Exports to every kind of target: a device that fails every write (/dev/full), a FIFO whose
 * reader leaves, special targets (/dev/null, /dev/stdout, a FIFO), a broken pipe on stderr, long
 * names, targets that cannot be written. Run on the real binary where the process's own descriptors
 * (its stdout, a FIFO it blocks on, a broken pipe) are the point; a target named with -o (a device,
 * a link, a long name) is opened by the same code in-process.
 */

const small = mockFixture({ referrals: 250 }); // pages of 100, 100, 50: the last one short
const slow = mockFixture({ referrals: 3000, latencyMs: 100 }); // still running when a reader leaves
let smallReference = ''; // the complete export of `small`, as written to an ordinary file

let dir: ReturnType<typeof tempDir>;

const STACK = /\n\s+at .+:\d+:\d+/;

/**
 * As root, the special targets are private copies made in the test's folder (a device node with the
 * same numbers, a symlink to /proc/self/fd/1): a regressed build run as root would otherwise turn
 * the machine's own /dev/null or /dev/stdout into a regular file (it did, once, while this test was
 * checked against the old code). Without root nothing in /dev can be replaced, so the real ones serve.
 */
const isRoot = process.getuid?.() === 0;

function device(name: 'null' | 'full', folder: string): string {
  if (!isRoot) return `/dev/${name}`;
  const path = join(folder, name);
  execFileSync('mknod', ['-m', '666', path, 'c', '1', name === 'null' ? '3' : '7']);
  return path;
}

function stdoutLink(folder: string): string {
  if (!isRoot) return '/dev/stdout';
  const path = join(folder, 'stdout');
  symlinkSync('/proc/self/fd/1', path);
  return path;
}

beforeAll(async () => {
  await Promise.all([small.start(), slow.start()]);
  const d = tempDir();
  try {
    // In-process: the same code as the binary's, the file the tests below compare theirs with.
    const r = await run(['referrals', 'export', '-o', join(d.path, 'small.csv')], { env: small.env() });
    expect(r.code).toBe(0);
    smallReference = readFileSync(join(d.path, 'small.csv'), 'utf8');
  } finally {
    d.cleanup();
  }
});

afterAll(() => Promise.all([small.stop(), slow.stop()]));

beforeEach(() => {
  const own = tempDir(); // cleaned by its own test's hook, also when tests run concurrently
  dir = own;
  return () => {
    slow.setLatency(undefined);
    own.cleanup();
  };
});

/**
 * A folder for one test of a concurrent group (the shared `dir` is the last one made). The groups
 * marked concurrent below each run their binaries at once: each test has its own folder and target,
 * and only reads the emulators.
 */
function ownDir(finished: (fn: () => void) => void) {
  const d = tempDir();
  finished(() => d.cleanup());
  return d;
}

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

describe.concurrent('an injected write error', () => {
  it('-o /dev/full (every write fails with ENOSPC): exit 1 naming it, and it stays a device', async ({
    expect,
    onTestFinished,
  }) => {
    const dir = ownDir(onTestFinished);
    const full = device('full', dir.path);
    const r = await cli(false, ['referrals', 'export', '-o', full], { env: small.env() });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`error: cannot write ${full}: no space left on the device`);
    expect(r.stderr).not.toMatch(STACK);
    expect(lstatSync(full).isCharacterDevice()).toBe(true);
  });

  it('standard output on /dev/full: one clear error, exit 1', async ({ expect, onTestFinished }) => {
    const dir = ownDir(onTestFinished);
    const fd = openSync(device('full', dir.path), 'w');
    try {
      const r = await runWithStdout(['referrals', 'export'], fd, small.env());
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/error: cannot write (to )?standard output: .*(no space|ENOSPC)/i);
      expect(r.stderr).not.toMatch(STACK);
    } finally {
      closeSync(fd);
    }
  });

  it('a FIFO whose reader leaves after the first chunk: exit 1 (broken pipe), and it stays a FIFO', async ({
    expect,
    onTestFinished,
  }) => {
    const dir = ownDir(onTestFinished);
    const fifo = join(dir.path, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const reader = createReadStream(fifo);
    reader.once('data', () => reader.destroy());
    // `slow` is still fetching pages when the reader leaves: the next page's write meets the
    // broken pipe (a fast export would be written whole into the pipe's buffer first).
    const r = await spawnCli(['referrals', 'export', '-o', fifo], { env: slow.env() });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`error: cannot write ${fifo}: the reader went away (broken pipe)`);
    expect(r.stderr).not.toMatch(STACK);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir.path)).toEqual(['pipe']);
  });
});

describe.concurrent('special targets are written in place, never replaced', () => {
  it('-o /dev/null stays the null device', async ({ expect, onTestFinished }) => {
    const dir = ownDir(onTestFinished);
    const devNull = device('null', dir.path);
    const before = statSync(devNull);
    const r = await cli(false, ['referrals', 'export', '-o', devNull], { env: small.env() });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`-> ${devNull}`);
    const after = lstatSync(devNull);
    expect(after.isCharacterDevice()).toBe(true);
    expect(after.rdev).toBe(before.rdev);
    expect(readdirSync(join(devNull, '..')).filter((f) => f.includes('.partial'))).toEqual([]);
  });

  it.for(['/dev/stdout', '/dev/fd/1'])(
    '-o %s writes to standard output and leaves the link',
    async (name, { expect, onTestFinished }) => {
      const dir = ownDir(onTestFinished);
      // /dev/fd/1 is the real one: a build that tried to replace it could only fail (nothing can be
      // created in /proc/self/fd).
      const target = name === '/dev/stdout' ? stdoutLink(dir.path) : name;
      const link = name === '/dev/stdout' ? target : '/dev/fd';
      const before = readlinkSync(link);
      const r = await spawnCli(['referrals', 'export', '-o', target], { env: small.env() });
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(smallReference.replace(/\r\n$/, '')); // execa strips the final line break
      expect(r.stderr).toContain(`-> ${target}`);
      expect(readlinkSync(link)).toBe(before);
    },
  );

  it('-o /dev/stdout with standard output redirected to a file: the file gets the export', async ({
    expect,
    onTestFinished,
  }) => {
    const dir = ownDir(onTestFinished);
    const target = stdoutLink(dir.path);
    const out = join(dir.path, 'out.csv');
    const fd = openSync(out, 'w');
    try {
      const r = await runWithStdout(['referrals', 'export', '-o', target], fd, small.env());
      expect(r.code).toBe(0);
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(out, 'utf8')).toBe(smallReference);
    expect(lstatSync(target).isSymbolicLink()).toBe(true);
  });

  it('a FIFO is written directly: its reader gets the whole export', async ({ expect, onTestFinished }) => {
    const dir = ownDir(onTestFinished);
    const fifo = join(dir.path, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const chunks: Buffer[] = [];
    const read = new Promise<string>((resolve, reject) => {
      createReadStream(fifo)
        .on('data', (c) => chunks.push(c as Buffer))
        .on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
        .on('error', reject);
    });
    const r = await spawnCli(['referrals', 'export', '-o', fifo], { env: small.env() });
    expect(r.exitCode).toBe(0);
    expect(await read).toBe(smallReference);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir.path)).toEqual(['pipe']);
  });
});

describe.concurrent('the temporary file', () => {
  it('is hidden, next to the target, 0600, and gone after the rename', async ({ expect, onTestFinished }) => {
    const dir = ownDir(onTestFinished);
    const shared = join(dir.path, 'shared');
    mkdirSync(shared);
    execFileSync('chmod', ['0777', shared]); // others can write here, no sticky bit
    const target = join(shared, 'referrals.csv');
    const file = await AtomicFile.open(target);
    const entries = readdirSync(shared);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatch(/^\.referrals\.csv\.p\d+\.[0-9a-f]{12}\.partial$/);
    expect(lstatSync(join(shared, entries[0]!)).isFile()).toBe(true);
    expect(lstatSync(join(shared, entries[0]!)).mode & 0o777).toBe(0o600);
    file.stream.write('a,b\r\n');
    await file.commit();
    expect(readdirSync(shared)).toEqual(['referrals.csv']);
    expect(lstatSync(target).mode & 0o777).toBe(0o600);
    expect(readFileSync(target, 'utf8')).toBe('a,b\r\n');
  });

  it('is removed with its file when the export is discarded', async ({ expect, onTestFinished }) => {
    const dir = ownDir(onTestFinished);
    const target = join(dir.path, 'referrals.csv');
    writeFileSync(target, 'old\n');
    const file = await AtomicFile.open(target);
    file.stream.write('half a row');
    file.discard();
    expect(readdirSync(dir.path)).toEqual(['referrals.csv']);
    expect(readFileSync(target, 'utf8')).toBe('old\n');
  });

  it('a symlink to a file stays a link; the file it points to is replaced', async ({
    expect,
    onTestFinished,
  }) => {
    const dir = ownDir(onTestFinished);
    const real = join(dir.path, 'real.csv');
    const link = join(dir.path, 'link.csv');
    writeFileSync(real, 'old\n');
    execFileSync('ln', ['-s', 'real.csv', link]);
    const r = await cli(false, ['referrals', 'export', '-o', link], { env: small.env() });
    expect(r.exitCode).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toBe(smallReference);
    expect(readdirSync(dir.path).sort()).toEqual(['link.csv', 'real.csv']);
  });
});

describe('a reader that goes away', () => {
  const bash = (script: string, env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('bash', ['--norc', '--noprofile', '-c', script], {
        env: { ...env, PATH: process.env.PATH, BIN },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('close', (code) => resolve({ code, stdout: out, stderr: err }));
    });

  it('`--verbose … -o FILE 2>&1 | head -2`: never exit 0, no file, no temporary file', async () => {
    const target = join(dir.path, 'referrals.csv');
    const r = await bash(
      `node "$BIN" --verbose referrals export -o "${target}" --per-page 20 2>&1 | head -2; exit "\${PIPESTATUS[0]}"`,
      slow.env(),
    );
    expect(r.stdout.split('\n')).toHaveLength(3); // two lines and the final break
    expect(r.code).toBe(1);
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it("only stderr's reader gone (`2>&1 >out.json | head -1`): never exit 0 with the answer unwritten", async () => {
    // The lookup's trace line goes to head, which leaves; the next trace line meets EPIPE while
    // stdout, a file, still waits for the answer. It stopped quietly: exit 0, out.json empty.
    const own = tempDir('imaging-stderr-epipe-');
    try {
      const out = join(own.path, 'out.json');
      const r = await bash(
        `node "$BIN" --no-cache --verbose cpt 73721 --json 2>&1 >"${out}" | head -1; exit "\${PIPESTATUS[0]}"`,
        slow.env(),
      );
      expect(r.stdout).toMatch(/^> GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/cpt_codes\?code=73721\n$/);
      expect(r.code).toBe(1);
      expect(readFileSync(out, 'utf8')).toBe('');
      // One reader for both streams, gone: as `| head`, a quiet stop (exit 0), whichever stream
      // met it first.
      const both = await bash(
        `node "$BIN" --no-cache --verbose cpt 73721 --json 2>&1 | head -1; exit "\${PIPESTATUS[0]}"`,
        slow.env(),
      );
      expect(both.stdout).toMatch(/^> GET /);
      expect(both.code).toBe(0);
    } finally {
      own.cleanup();
    }
  });

  it('data on standard output into `head` still stops quietly (exit 0)', async () => {
    const r = await bash(
      `node "$BIN" referrals export --format ndjson --per-page 20 | head -c 2000 > /dev/null; exit "\${PIPESTATUS[0]}"`,
      slow.env(),
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });
});

const launch = launcher();

describe('-o a descriptor the caller never handed over', () => {
  it.for(['/dev/fd/4', '/dev/fd/5', '/dev/fd/7', '/proc/self/fd/6', 'link'])(
    '-o %s: exit 2 before any request, suggesting standard output',
    async (name) => {
      // `link` is a symlink of one's own to /proc/self/fd/7.
      let target = name;
      if (name === 'link') {
        target = join(dir.path, 'link');
        symlinkSync('/proc/self/fd/7', target);
      }
      small.reset();
      const r = await launch(['referrals', 'export', '-o', target], small.env()).done;
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`error: cannot write ${target}: descriptor \\d+ is `));
      expect(r.stderr).toContain('standard output');
      expect(r.stderr).not.toMatch(STACK);
      expect(small.apiRequests()).toEqual([]);
    },
  );

  it('-o /dev/fd/3 handed over as a regular file: the file gets the export', async () => {
    const out = join(dir.path, 'out.csv');
    const fd = openSync(out, 'w');
    try {
      const r = await launch(['referrals', 'export', '-o', '/dev/fd/3'], small.env(), [fd]).done;
      expect(r.stderr).not.toMatch(STACK);
      expect(r.code).toBe(0);
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(out, 'utf8')).toBe(smallReference);
  });
});

describe.concurrent('a symlink to a file not there yet', () => {
  it('stays a link: the export is written where it points', async ({ expect, onTestFinished }) => {
    const dir = ownDir(onTestFinished);
    const link = join(dir.path, 'link.csv');
    symlinkSync('later.csv', link);
    const r = await cli(false, ['referrals', 'export', '-o', link], { env: small.env() });
    expect(r.exitCode).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir.path, 'later.csv'), 'utf8')).toBe(smallReference);
    expect(readdirSync(dir.path).sort()).toEqual(['later.csv', 'link.csv']);
  });
});

describe('exporting to a file name of 234-255 bytes', () => {
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

  /** The sandbox's configured base URL is the emulator's: there checkpoints are kept by default. */
  function configureSandbox(configDir: string, url: string): void {
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(configDir, 'config.json'),
      JSON.stringify({ environments: { sandbox: { base_url: url } } }),
      { mode: 0o600 },
    );
  }

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
    const r = await cli(false, ['referrals', 'export', '-o', target], { env: sandbox() });
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
    const r = await cli(false, ['referrals', 'export', '-o', target], { env: sandbox() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `cannot write ${target}: the name is too long (a file name can be at most 255 bytes`,
    );
    expect(r.stderr).not.toContain('ENAMETOOLONG');
  });
});

const hasSetpriv = (() => {
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(isRoot && !hasSetpriv)('a target the user cannot write (as a non-root user)', () => {
  const fx = mockFixture({ referrals: 300 });

  let dir: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    await fx.start();
  });

  afterAll(async () => {
    await fx.stop();
  });

  beforeEach(() => {
    dir = tempDir();
    fx.reset();
  });

  afterEach(() => dir.cleanup());

  const isRoot = process.getuid?.() === 0;

  /** The real binary as `nobody` (as root, through setpriv), or as the user running the tests. */
  const asUser = (args: string[]) => {
    const argv = [process.execPath, BIN, ...args];
    const [cmd, ...rest] = isRoot
      ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...argv]
      : argv;
    return execa(cmd!, rest, {
      reject: false,
      extendEnv: false,
      env: {
        ...fx.env(),
        IMAGING_CONFIG_DIR: join(dir.path, 'config'),
        NO_COLOR: '1',
        PATH: process.env.PATH,
      },
      timeout: 20_000,
    });
  };

  it('a read-only folder: names the target and "permission denied", never the temporary name', async () => {
    chmodSync(dir.path, 0o755);
    const ro = join(dir.path, 'ro');
    mkdirSync(ro, { mode: 0o555 });
    chmodSync(ro, 0o555);
    const target = join(ro, 'x.csv');
    const r = await asUser(['referrals', 'export', '-o', target]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      `error: cannot write ${target}: permission denied (this user cannot create files in ${ro})`,
    );
    expect(r.stderr).not.toMatch(/partial|EACCES/);
    expect(readdirSync(ro)).toEqual([]);
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('an existing file the user may not write is refused before any request, not after the export', async () => {
    chmodSync(dir.path, 0o755); // not a shared folder: there another user's file is refused as not theirs
    const target = join(dir.path, 'root.csv');
    writeFileSync(target, 'keep\n', { mode: 0o644 });
    chmodSync(target, 0o444);
    const r = await asUser(['referrals', 'export', '-o', target]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `error: cannot write ${target}: permission denied (the file is read-only for this user)`,
    );
    expect(readFileSync(target, 'utf8')).toBe('keep\n');
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it.skipIf(!existsSync('/proc/self'))(
    '-o /proc/x.csv gives the real reason, not "no such folder"',
    async () => {
      chmodSync(dir.path, 0o755);
      const r = await asUser(['referrals', 'export', '-o', '/proc/x.csv']);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toBe(
        'error: cannot write /proc/x.csv: files cannot be created in /proc (a proc file system, which holds no user files)',
      );
    },
  );
});

describe('a target that cannot be written says why', () => {
  const fx = mockFixture({ referrals: 60 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    fx.reset();
    fx.mock.faults.clear();
    dir = tempDir();
    return () => dir.cleanup();
  });

  const exportTo = (target: string) => run(['referrals', 'export', '-o', target], { env: fx.env() });
  it('a FILE where a folder of the path should be: "<it> is not a folder", not "no such folder"', async () => {
    writeFileSync(join(dir.path, 'ro2'), 'a file\n');
    const r = await exportTo(join(dir.path, 'ro2', 'x.csv'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `cannot write ${join(dir.path, 'ro2', 'x.csv')}: ${join(dir.path, 'ro2')} is not a folder`,
    );
    expect(r.stderr).not.toContain('no such folder');
    const dev = await exportTo('/dev/null/x.csv');
    expect(dev.code).toBe(2);
    expect(dev.stderr).toContain('cannot write /dev/null/x.csv: /dev/null is not a folder');
    expect(readFileSync(join(dir.path, 'ro2'), 'utf8')).toBe('a file\n');
    expect(fx.apiRequests()).toHaveLength(0);
  });
  it('-o /sys/x.csv names sysfs (even as root, where it is not a permission)', async () => {
    const r = await exportTo('/sys/x.csv');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'cannot write /sys/x.csv: files cannot be created in /sys (a sysfs file system',
    );
    expect(r.stderr).not.toContain('permission denied');
  });
  it('a trailing "/" after a FILE suggests no path inside it; after a folder, a name inside', async () => {
    writeFileSync(join(dir.path, 'ro2'), 'a file\n');
    const r = await exportTo(`${join(dir.path, 'ro2')}/`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`but ${join(dir.path, 'ro2')} is not a folder`);
    expect(r.stderr).toContain('e.g. -o referrals.csv');
    expect(r.stderr).not.toContain('ro2/referrals.csv');
    const folder = await exportTo(`${dir.path}/`);
    expect(folder.stderr).toContain(`e.g. -o ${dir.path}/referrals.csv`);
  });
});
