import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** End-to-end tests spawn bin/imaging.cjs, which runs dist/: build it first (esbuild, well under a second). */
export default function setup() {
  execFileSync(process.execPath, ['scripts/build.mjs'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: 'inherit',
  });
  return unmountLeftovers;
}
