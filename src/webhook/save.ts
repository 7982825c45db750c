import {
  constants as C,
  closeSync,
  mkdirSync,
  openSync,
  realpathSync,
  rmdirSync,
  type Stats,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { foreignAbove } from '../export/output-file.js';
import { mine, userName } from '../fs/write-file.js';
import type { Delivery } from './listener.js';

/** Headers that describe the bytes on the wire, not the body saved (which is whole, not chunked). */
const FRAMING = new Set(['content-length', 'transfer-encoding']);

/** How much `--save` keeps: after this many files or bytes it stops saving, so a flood cannot fill the disk. */
export const SAVE_LIMITS = { files: 1000, bytes: 100 * 1024 * 1024 };

/**
 * The folder `webhook listen --save` keeps captures in: made 0700 when missing; an existing one is
 * used as it is when it is yours (or root's), with a warning when others can read it (deliveries carry
 * patient data) or change it (remove or rename captures); another user's folder is refused.
 */
export function openSaveFolder(dir: string, warn: (text: string) => void): string {
  let st: Stats | undefined;
  try {
    st = statSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new UsageError(`--save ${dir}: ${(err as NodeJS.ErrnoException).code ?? 'cannot be read'}`);
  }
  if (!st) {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      throw new UsageError(
        `--save ${dir}: the folder cannot be made (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        'Give a folder whose parent exists and is yours.',
      );
    }
    return checkAbove(dir, true);
  }
  if (!st.isDirectory()) throw new UsageError(`--save ${dir} is not a folder`);
  if (!mine(st) && st.uid !== 0)
    throw new UsageError(
      `--save ${dir} belongs to ${userName(st.uid)}; captures are kept only in a folder of yours`,
      'Give a folder of your own (a missing one is made, 0700).',
    );
  const mode = (st.mode & 0o777).toString(8);
  if ((st.mode & 0o022) !== 0)
    warn(
      `warning: --save ${dir} can be changed by others (mode ${mode}): they can remove or rename the captures (chmod 700 ${dir} to close it)`,
    );
  else if ((st.mode & 0o044) !== 0)
    warn(
      `warning: --save ${dir} can be read by others (mode ${mode}); the captures are 0600, but their names show when deliveries came (chmod 700 ${dir} to close it)`,
    );
  return checkAbove(dir, false);
}

/**
 * The folder's real path, once no folder above it can be changed by another user, who could move
 * it away and put a link to their own folder in its place (as download -D checks). A folder made
 * for this run is removed again when refused.
 */
function checkAbove(dir: string, made: boolean): string {
  const real = realpathSync(dir);
  const above = foreignAbove(real);
  if (!above) return real;
  if (made) rmdirSync(dir);
  throw new UsageError(
    `--save ${dir}: ${above}`,
    'Keep captures in a folder only you can change, e.g. one in your home folder (a missing one is made, 0700).',
  );
}

/** Writes one delivery as a raw HTTP request `webhook verify --request` reads; never over an existing file. */
export function saveDelivery(dir: string, d: Delivery, n: number): string {
  const { method, target, headers, body } = d.request;
  const head = [
    `${method} ${target} HTTP/1.1`,
    ...headers.filter(([k]) => !FRAMING.has(k.toLowerCase())).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${body.length}`,
  ];
  const data = Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
  const stamp = d.receivedAt.replace(/[:.]/g, '-');
  for (let i = 0; ; i++) {
    const name = `${stamp}-${String(n).padStart(4, '0')}${i ? `-${i}` : ''}.http`;
    const path = join(dir, name);
    let fd: number;
    try {
      // O_EXCL: a file already there (or a link planted in its name) is never written through.
      fd = openSync(path, C.O_WRONLY | C.O_CREAT | C.O_EXCL | (C.O_NOFOLLOW ?? 0), 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && i < 100) continue;
      throw err;
    }
    try {
      let off = 0;
      while (off < data.length) off += writeSync(fd, data, off);
    } finally {
      closeSync(fd);
    }
    return path;
  }
}
