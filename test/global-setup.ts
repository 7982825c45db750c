import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What the build reads (with the MINIFY switch), and where the last build's fingerprint is kept. */
const INPUTS = [
  'src',
  'scripts/build.mjs',
  'scripts/eager.mjs',
  'scripts/absent.cjs',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
];
const STAMP = join(ROOT, 'node_modules', '.cache', 'imaging-test-build.json');

/** A hash of the files under `paths` (names and contents), in a fixed order. */
function hashOf(paths: string[]): string {
  const hash = createHash('sha256');
  const add = (rel: string) => {
    // dist/bin/ holds the single executables (scripts/package.mjs), not what the build makes.
    if (rel === join('dist', 'bin')) return;
    const full = join(ROOT, rel);
    let names: string[];
    try {
      names = readdirSync(full).sort();
    } catch {
      hash.update(`${rel}\0`).update(readFileSync(full)).update('\0');
      return;
    }
    for (const name of names) add(join(rel, name));
  };
  for (const p of paths) add(p);
  return hash.digest('hex');
}

/**
 * The small file systems the tests mount (a full disk, a read-only one: `mount -t tmpfs` on a
 * folder made by tmpfsFolder() in test/helpers.ts, as root) are unmounted by the describe block
 * that made them; a block that never runs its afterAll (a run filtered with -t, a failed
 * beforeAll) left them mounted, one per run. Whatever of this run's mounts are left when it ends
 * are unmounted here: their folders carry this process's id (the workers' parent), so another run
 * going on at the same time keeps its own.
 */
function unmountLeftovers(): void {
  let mounts: string;
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return; // not Linux: the tests that mount are skipped there
  }
  const ours = new RegExp(`/imaging-[a-z]+-tmpfs-${process.pid}-[^/]+/(disk|ro)$`);
  for (const line of mounts.split('\n')) {
    const [, point, type] = line.split(' ');
    if (type !== 'tmpfs' || !point) continue;
    // The mount table escapes spaces and the like as octal (\040); tempDir's names have none.
    if (!ours.test(point)) continue;
    try {
      execFileSync('umount', [point], { stdio: 'pipe' });
      rmSync(dirname(point), { recursive: true, force: true });
    } catch {
      // still busy or already gone: left for the next run
    }
  }
}

/**
 * End-to-end tests spawn bin/imaging.cjs, which runs dist/: it is built first, unless dist/ is the
 * one this set-up built from the same sources (the build is a serial CPU-second before any test).
 */
export default function setup() {
  const inputs = `${hashOf(INPUTS)} MINIFY=${process.env.MINIFY ?? ''}`;
  let stamp: { inputs?: string; dist?: string } = {};
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    // never built here: build
  }
  let current = false;
  try {
    current = stamp.inputs === inputs && stamp.dist === hashOf(['dist']);
  } catch {
    // no dist/
  }
  if (!current) {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
    mkdirSync(dirname(STAMP), { recursive: true });
    writeFileSync(STAMP, JSON.stringify({ inputs, dist: hashOf(['dist']) }));
  }
  return () => {
    unmountLeftovers();
    const scratch = process.env.IMAGING_TEST_SCRATCH;
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  };
}
