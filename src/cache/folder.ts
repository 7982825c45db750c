import { lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize, sep } from 'node:path';

// The private cache folders under IMAGING_CACHE_DIR, else the XDG or OS cache folder. Never one
// another user could write to: every folder above is root's or ours and closed to others (a sticky
// /tmp aside); the levels made here are made one at a time, 0700, each checked with lstat.

const CACHE_LEAF = 'reference';

export interface Location {
  start: string;
  levels: string[];
}

export function cacheLocation(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
  leaf = CACHE_LEAF,
): Location | undefined {
  if (platform === 'win32' || typeof process.getuid !== 'function') return undefined;
  const abs = (p: string | undefined) => (p && isAbsolute(p) ? normalize(p) : undefined);
  const split = (p: string, ...below: string[]) => ({
    start: dirname(p),
    levels: [basename(p), ...below],
  });
  if (env.IMAGING_CACHE_DIR !== undefined && env.IMAGING_CACHE_DIR !== '') {
    const dir = abs(env.IMAGING_CACHE_DIR);
    return dir && dir !== '/' ? split(dir, leaf) : undefined;
  }
  const home = abs(env.HOME);
  if (platform === 'darwin')
    return home ? { start: home, levels: ['Library', 'Caches', 'imaging', leaf] } : undefined;
  const xdg = abs(env.XDG_CACHE_HOME);
  if (xdg && xdg !== '/') return split(xdg, 'imaging', leaf);
  return home ? { start: home, levels: ['.cache', 'imaging', leaf] } : undefined;
}

export function displayPath(where: Location): string {
  return join(where.start, ...where.levels);
}

const STICKY = 0o1000;

type Folder = { dir: string } | { problem: string; missing?: true };

/** The private folder, made with `create`, or why it cannot be used. */
export function privateFolder(env: NodeJS.ProcessEnv, create = true, leaf = CACHE_LEAF): Folder {
  const where = cacheLocation(env, process.platform, leaf);
  if (!where)
    return { problem: 'no cache folder on this system (set IMAGING_CACHE_DIR to an absolute path)' };
  try {
    return walk(where, create);
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

function walk(where: Location, create: boolean): Folder {
  const uid = (process.getuid as () => number)();
  const trusted = (st: Stats) => st.uid === 0 || st.uid === uid;
  let start: string;
  try {
    start = realpathSync.native(where.start); // realpath(3): one call, not an lstat per component
  } catch {
    return { problem: `${where.start} does not exist` };
  }
  const parts = start.split(sep).filter(Boolean);
  let dir: string = sep;
  let parent = lstatSync(dir);
  if (!parent.isDirectory() || !trusted(parent)) return { problem: '/ is not owned by root or you' };
  const next = [...parts, ...where.levels];
  for (let i = 0; i < next.length; i++) {
    const child = join(dir, next[i] as string);
    const last = i === next.length - 1;
    let st: Stats;
    try {
      st = lstatSync(child);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || i < parts.length)
        return { problem: `cannot read ${child}` };
      // Nothing is made in a folder others can write to (unless sticky: then what we make is ours).
      if (parent.mode & 0o022 && !(parent.mode & STICKY)) return { problem: `${dir} is writable by others` };
      if (!create) return { problem: `${child} does not exist yet`, missing: true };
      try {
        mkdirSync(child, { mode: 0o700 });
      } catch (mkErr) {
        if ((mkErr as NodeJS.ErrnoException).code !== 'EEXIST') return { problem: `cannot make ${child}` };
      }
      st = lstatSync(child);
    }
    if (st.isSymbolicLink()) return { problem: `${child} is a symbolic link` };
    if (!st.isDirectory()) return { problem: `${child} is not a folder` };
    // A folder others can write to is acceptable above this one only if sticky and this one is ours.
    if (parent.mode & 0o022 && !(parent.mode & STICKY && st.uid === uid))
      return { problem: `${dir} is writable by others` };
    if (!trusted(st)) return { problem: `${child} belongs to another user` };
    if (last && (st.uid !== uid || (st.mode & 0o7777) !== 0o700))
      return { problem: `${child} is not private (it must be yours, mode 0700)` };
    dir = child;
    parent = st;
  }
  return { dir };
}
