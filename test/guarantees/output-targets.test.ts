import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  createReadStream,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statfsSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AtomicFile } from '../../src/export/output-file.js';
import { BIN, mockFixture, run, spawnCli, tempDir, tmpfsFolder } from '../helpers.js';

/**
 * Exports that meet real failures: a full file system (a real tmpfs of 256 KiB), a device that
 * fails every write (/dev/full), a FIFO whose reader leaves, special targets (/dev/null,
 * /dev/stdout, a FIFO), a broken pipe on stderr. Run on the real binary.
 */

const big = mockFixture({ referrals: 3000 }); // ~1 MiB of CSV: more than the tmpfs holds
const small = mockFixture({ referrals: 250 }); // pages of 100, 100, 50: the last one short
const slow = mockFixture({ referrals: 3000, latencyMs: 100 }); // still running when a pipe breaks
let reference = ''; // the complete export of `big`, as written to an ordinary file
let smallReference = '';
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
  await Promise.all([big.start(), small.start(), slow.start()]);
  const d = tempDir();
  try {
    for (const [fx, name] of [
      [big, 'big.csv'],
      [small, 'small.csv'],
    ] as const) {
      // In-process: the same code as the binary's, the file the tests below compare theirs with.
      const r = await run(['referrals', 'export', '-o', join(d.path, name)], { env: fx.env() });
      expect(r.code).toBe(0);
    }
    reference = readFileSync(join(d.path, 'big.csv'), 'utf8');
    smallReference = readFileSync(join(d.path, 'small.csv'), 'utf8');
  } finally {
    d.cleanup();
  }
  expect(reference.length).toBeGreaterThan(512 * 1024);
});
afterAll(() => Promise.all([big.stop(), small.stop(), slow.stop()]));
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

/** A real small file system; mounting needs root (CI runs as root). */
function mountTmpfs(): { path: string; error?: string } {
  const path = join(tmpfsFolder('export').path, 'disk');
  mkdirSync(path);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0755', 'tmpfs', path], { stdio: 'pipe' });
    return { path };
  } catch (err) {
    rmSync(join(path, '..'), { recursive: true, force: true });
    return { path, error: String((err as { stderr?: Buffer }).stderr ?? err).trim() };
  }
}

const disk = mountTmpfs();

describe.skipIf(disk.error !== undefined)(
  `a full disk (a real 256 KiB tmpfs${disk.error ? `; skipped: cannot mount one: ${disk.error}` : ''})`,
  () => {
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
      const r = await spawnCli(['referrals', 'export', '-o', target], { env: small.env() });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain(`error: cannot write ${target}: no space left on the device`);
      expect(r.stderr).not.toContain('Exported');
      expect(readdirSync(disk.path)).toEqual(['filler']);
    });

    it('a file already at the target stays untouched', async () => {
      const target = join(disk.path, 'referrals.csv');
      writeFileSync(target, 'the previous export\n');
      const r = await spawnCli(['referrals', 'export', '-o', target], { env: big.env() });
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
        const r = await spawnCli(['referrals', 'export', '-o', target], { env: big.env() });
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
    const r = await spawnCli(['referrals', 'export', '-o', full], { env: small.env() });
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
    const r = await spawnCli(['referrals', 'export', '-o', fifo], { env: big.env() });
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
    const r = await spawnCli(['referrals', 'export', '-o', devNull], { env: small.env() });
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
    expect(entries[0]).toMatch(/^\.referrals\.csv\.[0-9a-f]{12}\.partial$/);
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
    const r = await spawnCli(['referrals', 'export', '-o', link], { env: small.env() });
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

/** Children still running when a test ends (a regressed build hangs on /dev/fd/5): killed. */
const launched = new Set<ReturnType<typeof spawn>>();
afterEach(() => {
  for (const c of launched) c.kill('SIGKILL');
  launched.clear();
});

/** Starts the real binary with its own stdio (0–2 only, unless `extra` hands over more). */
function launch(args: string[], env: NodeJS.ProcessEnv, extra: number[] = []) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...env, PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe', ...extra],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve) =>
    child.on('close', (code, signal) => {
      launched.delete(child);
      resolve({ code, signal, stdout: out, stderr: err });
    }),
  );
  launched.add(child);
  return { child, done };
}

/** Waits for a real condition (a file appearing), checking every 10 ms. */
async function until<T>(probe: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 1000; i++) {
    const v = probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}
const partialIn = (folder: string) => () => readdirSync(folder).find((f) => f.endsWith('.partial'));

describe.skipIf(!isRoot)('another user swaps the temporary file for a symlink', () => {
  /** shared: 0777, not sticky; victim/passwd: root's, elsewhere. The attacker runs as nobody. */
  function scene() {
    execFileSync('chmod', ['0755', dir.path]);
    const shared = join(dir.path, 'shared');
    const victim = join(dir.path, 'victim');
    mkdirSync(shared);
    mkdirSync(victim);
    execFileSync('chmod', ['0777', shared]);
    writeFileSync(join(victim, 'passwd'), 'root:x:0:0\n');
    return { shared, victim, target: join(shared, 'passwd') };
  }
  function attack(shared: string, victim: string, partial: string) {
    execFileSync('setpriv', [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      'sh',
      '-c',
      `mv "${shared}/${partial}" "${shared}/moved" && ln -s "${victim}/passwd" "${shared}/${partial}"`,
    ]);
  }

  it('the export fails naming it; nothing outside is touched, the moved file is emptied', async () => {
    const { shared, victim, target } = scene();
    const run = launch(['referrals', 'export', '-o', target, '--per-page', '50'], slow.env());
    const partial = await until(partialIn(shared), 'the temporary file');
    attack(shared, victim, partial);
    slow.setLatency(0); // the swap is done: the rest of the export need not wait
    const r = await run.done;
    expect(r.stderr).not.toMatch(STACK);
    expect(readFileSync(join(victim, 'passwd'), 'utf8')).toBe('root:x:0:0\n');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('moved away by someone else');
    expect(statSync(join(shared, 'moved')).size).toBe(0); // emptied: no patient data left
    expect(existsSync(target)).toBe(false);
  });

  it('the same, interrupted by SIGINT: exit 130, nothing outside touched, no data left anywhere', async () => {
    const { shared, victim, target } = scene();
    const run = launch(['referrals', 'export', '-o', target, '--per-page', '50'], slow.env());
    const partial = await until(partialIn(shared), 'the temporary file');
    attack(shared, victim, partial);
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(130);
    expect(readFileSync(join(victim, 'passwd'), 'utf8')).toBe('root:x:0:0\n');
    expect(statSync(join(shared, 'moved')).size).toBe(0);
    expect(lstatSync(join(shared, partial)).isSymbolicLink()).toBe(true); // theirs, left alone
  });
});

describe('-o a descriptor the caller never handed over (issue 8, D2)', () => {
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
    const r = await spawnCli(['referrals', 'export', '-o', link], { env: small.env() });
    expect(r.exitCode).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir.path, 'later.csv'), 'utf8')).toBe(smallReference);
    expect(readdirSync(dir.path).sort()).toEqual(['later.csv', 'link.csv']);
  });
});

describe('other terminating signals during `export -o` are handled like SIGTERM', () => {
  it.for([
    ['SIGUSR2', 140],
    ['SIGALRM', 142],
    ['SIGVTALRM', 154],
  ] as const)('%s: exit %i, nothing left behind', async ([sig, code]) => {
    const target = join(dir.path, 'out.csv');
    const run = launch(['referrals', 'export', '-o', target, '--per-page', '50'], slow.env());
    await until(partialIn(dir.path), 'the temporary file');
    run.child.kill(sig);
    const r = await run.done;
    expect(r.code).toBe(code);
    expect(readdirSync(dir.path)).toEqual([]);
  });
});
