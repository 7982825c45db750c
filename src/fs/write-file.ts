import {
  constants as C,
  close,
  closeSync,
  fstatSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { promisify } from 'node:util';
import { onForcedExit } from '../util/cleanup.js';
import { hiddenName, NAME_MAX } from '../util/hidden-name.js';

// The one way files are written: a 0600 temporary file opened O_CREAT|O_EXCL|O_NOFOLLOW beside the
// target, flushed, then renamed over it; no symlink is followed.

const writeAsync = promisify(write);
const fsyncAsync = promisify(fsync);

export const mine = (st: Stats): boolean => {
  const euid = process.geteuid?.();
  return euid === undefined || st.uid === euid;
};
export const sameFile = (a: Stats, b: Stats): boolean => a.ino === b.ino && a.dev === b.dev;

export function userName(uid: number): string {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.split(':')[2] === String(uid));
    if (line) return line.split(':')[0] as string;
  } catch {}
  return `uid ${uid}`;
}

/** lstat (stat with `follow`), or undefined when nothing is there. */
export function statIfAny(path: string, follow = false): Stats | undefined {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * The bytes at `path`, opened never through a symlink nor waiting on a FIFO; `check` sees what was
 * opened before anything is read, and throws to refuse it.
 */
export function readNoFollow(path: string, check: (st: Stats) => void): Buffer {
  const fd = openSync(path, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  try {
    check(fstatSync(fd));
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** What a file system entry is, in words. */
export const describeFile = (st: Stats): string =>
  st.isSymbolicLink()
    ? 'a symlink'
    : st.isFIFO()
      ? 'a named pipe (FIFO)'
      : st.isDirectory()
        ? 'a folder'
        : st.isFile()
          ? 'a file'
          : st.isSocket()
            ? 'a socket'
            : 'a device';

const REASONS: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large for this file system',
  EIO: 'input/output error (the disk or device failed)',
  EPIPE: 'the reader went away (broken pipe)',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOENT: 'no such folder',
  ENOTDIR: 'no such folder',
  ENXIO: 'nothing is reading it (no such device or address)',
  ENAMETOOLONG: `the name is too long (a file name can be at most ${NAME_MAX} bytes, a whole path 4096)`,
};

/** Why a write failed, in words, without the temporary path Node puts in its messages. */
export function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return REASONS[e?.code ?? ''] ?? String(e?.message ?? err).replace(/, \w+ '[^']*'(?: -> '[^']*')?$/, '');
}

/** A file system that cannot sync has nothing more to flush; any other error means data may be lost. */
const syncUnsupported = (err: unknown) =>
  ['EINVAL', 'ENOTSUP', 'EBADF'].includes((err as NodeJS.ErrnoException)?.code ?? '');

/** Writes every byte or fails: a short write is continued until the kernel says why (Node's streams drop the rest). */
export class FdWriter extends Writable {
  private inFlight: Promise<unknown> = Promise.resolve();
  constructor(
    readonly fd: number,
    private readonly owned: boolean,
    private readonly sync: boolean,
  ) {
    super({ highWaterMark: 1 << 16, autoDestroy: false });
  }
  private async writeAll(buf: Buffer): Promise<void> {
    for (let off = 0; off < buf.length; ) {
      const { bytesWritten } = await writeAsync(this.fd, buf, off, buf.length - off, null);
      if (bytesWritten <= 0) throw Object.assign(new Error('the device accepted no data'), { code: 'EIO' });
      off += bytesWritten;
    }
  }
  private run(work: Promise<void>, cb: (err?: Error | null) => void): void {
    this.inFlight = work.catch(() => {});
    work.then(() => cb(), cb);
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.run(this.writeAll(chunk), cb);
  }
  override _final(cb: (err?: Error | null) => void): void {
    const flushed = this.sync ? fsyncAsync(this.fd) : Promise.resolve();
    this.run(
      flushed.catch((err) => {
        if (!syncUnsupported(err)) throw err;
      }),
      cb,
    );
  }
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    // Never close a descriptor a write is still using: the number could be reused meanwhile.
    void this.inFlight.then(() => (this.owned ? close(this.fd, () => cb(err)) : cb(err)));
  }
}

function syncFolder(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, C.O_RDONLY | C.O_DIRECTORY);
    fsyncSync(fd);
  } catch (err) {
    if (!syncUnsupported(err)) throw err;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A hidden temporary file beside `target`, renamed over it by `commit()` or removed by `discard()`. */
export class TempFile {
  readonly path: string;
  readonly fd: number;
  readonly stream: FdWriter;
  private readonly inode: Stats;
  private settled = false;
  private readonly unregister: () => void;

  constructor(readonly target: string) {
    const random = process.getBuiltinModule('node:crypto').randomBytes(6).toString('hex');
    // The writer's pid in the name: a run killed outright (kill -9) leaves its file, which the next
    // write to the same target removes once that pid is gone.
    const name = hiddenName(basename(target), `.p${process.pid}.${random}.partial`);
    this.path = join(dirname(target), name);
    sweepAbandoned(dirname(target), name);
    this.fd = openSync(this.path, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
    this.inode = fstatSync(this.fd);
    this.stream = new FdWriter(this.fd, true, true);
    this.unregister = onForcedExit(() => this.discard());
  }

  /** Whether the temporary name still holds our file (someone may rename it in a shared folder). */
  private stillOurs(): boolean {
    try {
      return sameFile(lstatSync(this.path), this.inode);
    } catch {
      return false;
    }
  }

  end(): Promise<void> {
    const done = finished(this.stream, { readable: false });
    this.stream.end();
    return done;
  }

  async commit(): Promise<void> {
    await this.end();
    this.commitSync();
  }

  /** Fails if the name was taken from us. */
  commitSync(dest = this.target): void {
    if (!this.stillOurs())
      throw Object.assign(new Error('the temporary file was moved away by someone else'), { code: 'EMOVED' });
    renameSync(this.path, dest);
    this.settled = true;
    this.discard();
    syncFolder(dirname(dest));
  }

  /** Only ours: one moved away is emptied instead. Safe to call again, and on exit. */
  discard(): void {
    this.unregister();
    if (!this.settled) {
      this.settled = true;
      try {
        if (this.stillOurs()) unlinkSync(this.path);
        else ftruncateSync(this.fd, 0);
      } catch {}
    }
    if (!this.stream.destroyed) this.stream.destroy();
  }
}

const ABANDONED_AFTER_MS = 60_000;

/**
 * Removes the temporary files of earlier writes to the same target (`ours` is this write's name) that
 * their writer left when it was killed: ours (the user's), regular files, their pid no longer running,
 * untouched for a minute. Anything else is left as it is.
 */
function sweepAbandoned(folder: string, ours: string): void {
  const shape = /^(.*)\.p(\d+)\.[0-9a-f]{12}\.partial$/;
  const base = shape.exec(ours)?.[1];
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const m = shape.exec(name);
    if (!m || m[1] !== base || name === ours || running(Number(m[2]))) continue;
    const path = join(folder, name);
    try {
      const st = lstatSync(path);
      if (st.isFile() && mine(st) && Date.now() - st.mtimeMs > ABANDONED_AFTER_MS) unlinkSync(path);
    } catch {}
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

export function writeFileAtomic(target: string, data: string | Buffer): void {
  const temp = new TempFile(target);
  try {
    const buf = Buffer.from(data);
    for (let off = 0; off < buf.length; ) off += writeSync(temp.fd, buf, off, buf.length - off);
    fsyncSync(temp.fd);
    temp.commitSync();
  } catch (err) {
    temp.discard();
    throw err;
  }
}

/** Runs `fn` holding the lock file `path`; a lock whose process is gone is taken over. */
export function withLock<T>(path: string, fn: () => T, timeoutMs = 10_000): T {
  const until = Date.now() + timeoutMs;
  let held: Stats | undefined;
  while (!held) {
    try {
      const fd = openSync(path, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
      held = fstatSync(fd);
      try {
        writeSync(fd, String(process.pid));
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      if (held) unlock(path, held);
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || held) throw err;
      if (!holderGone(path) && Date.now() > until)
        throw Object.assign(new Error(`${path} is held by another process`), { code: 'ELOCKED' });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 + Math.random() * 20);
    }
  }
  try {
    return fn();
  } finally {
    unlock(path, held);
  }
}

function unlock(path: string, held: Stats): void {
  try {
    if (sameFile(lstatSync(path), held)) unlinkSync(path);
  } catch {}
}

function holderGone(path: string): boolean {
  try {
    const pid = Number(readFileSync(path, 'utf8'));
    if (pid > 0) {
      process.kill(pid, 0);
      return false;
    }
    if (Date.now() - lstatSync(path).mtimeMs < 60_000) return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') return false;
  }
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}
