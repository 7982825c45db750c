import { randomBytes } from 'node:crypto';
import {
  accessSync,
  close,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsync,
  lstatSync,
  mkdirSync,
  open,
  openSync,
  renameSync,
  rmdirSync,
  type Stats,
  statfsSync,
  statSync,
  truncateSync,
  unlinkSync,
  write,
} from 'node:fs';
import { realpath, rename, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { finished, Writable } from 'node:stream';
import { CliError } from '../errors.js';
import { HumanStream } from '../output/text.js';
import { onForcedExit } from './cleanup.js';
import { hiddenName, NAME_MAX } from './hidden-name.js';

/** Why a write failed, in words, without the temporary path Node puts in its messages. */
export function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EFBIG':
      return 'file too large for this file system';
    case 'EIO':
      return 'input/output error (the disk or device failed)';
    case 'EPIPE':
      return 'the reader went away (broken pipe)';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOENT':
    case 'ENOTDIR':
      return 'no such folder';
    case 'ENXIO':
      return 'nothing is reading it (no such device or address)';
    case 'ENAMETOOLONG':
      return `the name is too long (a file name can be at most ${NAME_MAX} bytes, a whole path 4096)`;
    default:
      return String(e?.message ?? err).replace(/, \w+ '[^']*'(?: -> '[^']*')?$/, '');
  }
}

const fsCall = <T>(fn: (cb: (err: NodeJS.ErrnoException | null, value: T) => void) => void) =>
  new Promise<T>((ok, fail) => fn((err, value) => (err ? fail(err) : ok(value))));

/**
 * A stream onto a file descriptor that writes every byte or fails: a short write (the disk filled
 * up part-way through a chunk) is continued until the kernel says why it cannot, where Node's own
 * file streams drop the rest silently. `sync` also flushes to disk before `finish`.
 */
class FdWriter extends Writable {
  private inFlight: Promise<unknown> = Promise.resolve();
  constructor(
    readonly fd: number,
    private readonly owned: boolean,
    private readonly sync: boolean,
  ) {
    super({ highWaterMark: 1 << 16 });
  }

  private async writeAll(buf: Buffer): Promise<void> {
    let offset = 0;
    while (offset < buf.length) {
      const n = await fsCall<number>((cb) => write(this.fd, buf, offset, buf.length - offset, null, cb));
      if (n <= 0) throw Object.assign(new Error('the device accepted no data'), { code: 'EIO' });
      offset += n;
    }
  }

  private run(work: Promise<void>, cb: (err?: Error | null) => void): void {
    this.inFlight = work.catch(() => {});
    work.then(() => cb(), cb);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.run(this.writeAll(chunk), cb);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, cb: (err?: Error | null) => void): void {
    this.run(this.writeAll(Buffer.concat(chunks.map((c) => c.chunk))), cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (!this.sync) {
      cb();
      return;
    }
    // A file system that cannot sync (EINVAL, ENOTSUP) has nothing more to flush; any other error
    // (EIO, ENOSPC on a network file system) means the data may not be on disk: fail.
    const unsupported = (err: NodeJS.ErrnoException | null) =>
      ['EINVAL', 'ENOTSUP'].includes(err?.code ?? '');
    const flushed = fsCall<void>((done) =>
      fsync(this.fd, (err) => done(unsupported(err) ? null : err, undefined)),
    );
    this.run(flushed, cb);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    // Never close a descriptor a write is still using: the number could be reused meanwhile.
    void this.inFlight.then(() => {
      if (this.owned) close(this.fd, () => cb(err));
      else cb(err);
    });
  }
}

type Kind = 'atomic' | 'direct' | 'stdout';

/**
 * Where an export goes, and the promise that it is either complete and on disk or not there at all.
 *
 * - A new or regular file (`atomic`): written in a private folder (0700) created next to the target,
 *   as a file created 0600 (it holds patient data), flushed to disk, renamed over the target only when
 *   complete, and the folder flushed and removed. Nobody else can swap the file before the rename,
 *   even in a folder others can write to.
 * - A device, FIFO or other special file (`direct`: `/dev/null`, a named pipe, `/dev/fd/N`): written
 *   as it is, never replaced by a regular file.
 * - Standard output (`stdout`, or a target that is the same file as it, `/dev/stdout`).
 *
 * Any write error (ENOSPC, EIO, EFBIG, EPIPE) is kept: `failed` aborts so the export stops, and
 * `commit()` throws it naming the target, never the temporary path.
 */
export class AtomicFile {
  /** Absolute path of the target (or "standard output"). */
  readonly target: string;
  readonly kind: Kind;
  readonly stream: Writable;
  /** Aborted, with the write error as reason, as soon as a write fails. */
  readonly failed: AbortSignal;
  private readonly name: string;
  private readonly tempDir: string | undefined;
  private readonly tempPath: string | undefined;
  private readonly inode: Stats | undefined;
  private error: CliError | undefined;
  private settled = false;
  private unregister: () => void = () => {};

  private constructor(init: {
    name: string;
    target: string;
    kind: Kind;
    stream: Writable;
    tempDir?: string;
    tempPath?: string;
    inode?: Stats;
  }) {
    this.name = init.name;
    this.target = init.target;
    this.kind = init.kind;
    this.stream = init.stream;
    this.tempDir = init.tempDir;
    this.tempPath = init.tempPath;
    this.inode = init.inode;
    const failed = new AbortController();
    this.failed = failed.signal;
    this.stream.on('error', (err) => {
      this.error ??= this.writeError(err);
      failed.abort(this.error);
    });
  }

  /** The write error, if any write failed. */
  get writeFailure(): CliError | undefined {
    return this.error;
  }

  private writeError(err: unknown): CliError {
    return new CliError(`cannot write ${this.name}: ${reasonOf(err)}`);
  }

  /**
   * Standard output for data. When it is a regular file (`> out.csv`) or a device, written through
   * the file descriptor so that a full disk is an error, not a silently shortened file.
   */
  static stdout(stdout: Writable): AtomicFile {
    let st: Stats | undefined;
    try {
      if (stdout === process.stdout && !process.getBuiltinModule('node:tty').isatty(1)) st = fstatSync(1);
    } catch {
      // not a descriptor we can look at: use the stream
    }
    const viaFd = st !== undefined && (st.isFile() || st.isCharacterDevice());
    return new AtomicFile({
      name: 'standard output',
      target: 'standard output',
      kind: 'stdout',
      stream: viaFd ? new FdWriter(1, false, Boolean(st?.isFile())) : stdout,
    });
  }

  static async open(
    target: string,
    opts: { stdout?: Writable; signal?: AbortSignal; onWait?: () => void } = {},
  ): Promise<AtomicFile> {
    const abs = resolve(target);
    const nameBytes = Buffer.byteLength(basename(abs));
    if (nameBytes > NAME_MAX)
      throw new CliError(
        `cannot write ${target}: its file name is ${nameBytes} bytes long, and a file name can be at most ${NAME_MAX} bytes`,
        2,
        'Choose a shorter file name.',
      );
    const fail = (err: unknown, exitCode = 2) => {
      // A file where a folder of the path should be (`-o notes.txt/x.csv`, `/dev/null/x.csv`).
      const file = (err as NodeJS.ErrnoException)?.code === 'ENOTDIR' ? fileInPath(target) : undefined;
      return new CliError(
        `cannot write ${target}: ${file ? `${file} is not a folder` : reasonOf(err)}`,
        exitCode,
      );
    };
    // Follow symlinks ourselves: a link to a missing file is written through (the link stays), and
    // a path into a process's descriptor table (/dev/fd/N, /proc/self/fd/N, or a link to one) is seen
    // as such whatever it is called.
    let where: Resolved;
    try {
      where = await resolveTarget(abs);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EACCES')
        throw new CliError(
          `cannot write ${target}: permission denied (this user cannot open the folder ${dirname(abs)})`,
          2,
        );
      throw fail(err);
    }
    let st: Stats | undefined;
    try {
      st = await stat(where.path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (where.fd !== undefined && (code === 'ENOENT' || code === 'EBADF'))
        throw new CliError(
          `cannot write ${target}: descriptor ${where.fd} is not open`,
          2,
          'Write to standard output instead: leave out -o, or use -o /dev/stdout',
        );
      if (code !== 'ENOENT') throw fail(err);
    }
    if (where.fd !== undefined && where.fd > 2 && st) checkDescriptor(target, where, st);
    if (st?.isDirectory())
      throw new CliError(
        `cannot write ${target}: it is a folder`,
        2,
        'Give a file name, e.g. -o referrals.csv',
      );

    // The same file as our standard output (/dev/stdout, /dev/fd/1): write to stdout itself. Opening
    // it again would fail for a socket and truncate a file opened for appending.
    const special = isSpecialPath(abs) || isSpecialPath(where.path) || where.fd !== undefined;
    if (st && opts.stdout && sameFile(st, 1) && (isSymlink(abs) || !st.isFile() || special)) {
      const out = AtomicFile.stdout(opts.stdout);
      return new AtomicFile({ name: target, target: abs, kind: 'stdout', stream: out.stream });
    }

    if (st && (!st.isFile() || special)) {
      // A device, FIFO, socket or /dev/fd/N: write it as it is, never replace it.
      if (st.isFIFO()) {
        // A FIFO (or a pipe named by /dev/fd/N) waits for a reader, as `cat > fifo` does, and is
        // written without blocking: a reader that stops reading never pins a thread, so Ctrl-C
        // still ends the process.
        let fd: number;
        try {
          fd = await openFifo(abs, opts.signal, opts.onWait);
        } catch (err) {
          if (opts.signal?.aborted) throw opts.signal.reason;
          throw fail(err);
        }
        const { Socket } = await import('node:net');
        return new AtomicFile({
          name: target,
          target: abs,
          kind: 'direct',
          stream: new Socket({ fd, readable: false, writable: true }),
        });
      }
      let fd: number;
      try {
        fd = await fsCall<number>((cb) => open(abs, constants.O_WRONLY | constants.O_APPEND, cb));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENXIO' && st.isSocket())
          throw new CliError(`cannot write ${target}: it is a socket`, 2);
        throw fail(err);
      }
      return new AtomicFile({
        name: target,
        target: abs,
        kind: 'direct',
        stream: new FdWriter(fd, true, st.isFile()),
      });
    }

    // A regular file (through any symlink: the link stays, the file it points to is replaced) or a new one.
    const real = where.path;
    // A file this user may not write is not replaced behind its owner's back (as `>` would refuse):
    // said now, before any request, rather than after the whole export when the rename fails.
    if (st && !writable(real))
      throw new CliError(
        `cannot write ${target}: permission denied (the file is read-only for this user)`,
        2,
        'Choose another file name, or make the file writable first.',
      );
    // Hidden, never named like the finished file, and short enough beside any valid name (hidden-name.ts).
    const tempDir = join(
      dirname(real),
      hiddenName(basename(real), `.${randomBytes(6).toString('hex')}.partial`),
    );
    // Created synchronously, so that a forced exit (a second Ctrl-C) never races an open in flight.
    try {
      mkdirSync(tempDir, { mode: 0o700 });
    } catch (err) {
      // The temporary name means nothing to the user: the reason is about the folder of the target.
      throw new CliError(`cannot write ${target}: ${folderReason(err, dirname(real))}`, 2);
    }
    // In a folder others can write to, our folder can be renamed away and a symlink put in its
    // place; a path through it would then reach somewhere else (as root: delete any file). So the
    // folder is pinned by a descriptor right away, checked to be ours, and its file is only ever
    // reached through /proc/self/fd/<dirfd>/NAME: the folder object itself, wherever it is moved.
    let dirFd: number | undefined;
    let base = tempDir;
    try {
      dirFd = openSync(tempDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      const d = fstatSync(dirFd);
      const uid = process.geteuid?.();
      if (!d.isDirectory() || (d.mode & 0o077) !== 0 || (uid !== undefined && d.uid !== uid))
        throw new Error('the temporary folder was replaced');
      // Where /proc/self/fd is absent (macOS), the folder is reached by its path, as before.
      if (existsSync(`/proc/self/fd/${dirFd}`)) base = `/proc/self/fd/${dirFd}`;
    } catch (err) {
      // Not provably our folder: touch nothing there.
      if (dirFd !== undefined) closeSync(dirFd);
      throw fail(err);
    }
    const tempPath = join(base, basename(real));
    const removeDir = () => {
      const fd = dirFd;
      if (fd === undefined) return;
      dirFd = undefined;
      try {
        // rmdir never follows a final symlink; and only the folder we pinned is removed.
        let here: Stats | undefined;
        try {
          here = lstatSync(tempDir);
        } catch {
          // gone from its place
        }
        const pinned = fstatSync(fd);
        if (here?.isDirectory() && here.ino === pinned.ino && here.dev === pinned.dev) rmdirSync(tempDir);
        else
          new HumanStream(process.stderr).line(
            `warning: the temporary folder ${tempDir} was moved away by someone else; it was left where it went, empty`,
          );
      } catch {
        // best effort: it holds no data any more
      } finally {
        closeSync(fd);
      }
    };
    const removeTemp = () => {
      try {
        unlinkSync(tempPath);
      } catch {
        // not created, or already gone
      }
      removeDir();
    };
    const unregister = onForcedExit(removeTemp);
    let fd: number;
    try {
      fd = openSync(
        tempPath,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
    } catch (err) {
      unregister();
      removeTemp();
      throw fail(err);
    }
    const file = new AtomicFile({
      name: target,
      target: real,
      kind: 'atomic',
      stream: new FdWriter(fd, true, true),
      tempDir,
      tempPath,
      inode: fstatSync(fd),
    });
    file.unregister = () => {
      unregister();
    };
    file.removeTemp = removeTemp;
    file.removeDir = removeDir;
    return file;
  }

  private removeTemp: () => void = () => {};
  private removeDir: () => void = () => {};

  /**
   * Finishes the output: every byte written and flushed to disk (fsync of the file, then of its
   * folder after the rename), or an error naming the target. Only then may the command say it is done.
   */
  async commit(): Promise<void> {
    if (this.settled) return;
    if (this.error) throw this.fail();
    if (this.kind === 'stdout' && !(this.stream instanceof FdWriter)) {
      this.settled = true;
      return;
    }
    try {
      await new Promise<void>((ok, fail) => {
        finished(this.stream, { readable: false }, (err) => (err ? fail(err) : ok()));
        this.stream.end();
      });
    } catch (err) {
      this.error ??= this.writeError(err);
      throw this.fail();
    }
    if (this.kind !== 'atomic' || !this.tempPath || !this.tempDir) {
      this.settled = true;
      this.stream.destroy();
      return;
    }
    try {
      // The file about to be renamed must still be the one written (the folder is private, but check).
      const now = lstatSync(this.tempPath);
      if (!this.inode || now.ino !== this.inode.ino || now.dev !== this.inode.dev)
        throw new Error('the temporary file was replaced');
      await rename(this.tempPath, this.target);
    } catch (err) {
      this.discard();
      throw new CliError(`cannot put the finished file at ${this.name}: ${reasonOf(err)}`);
    }
    this.settled = true;
    this.unregister();
    try {
      const dirFd = await fsCall<number>((cb) => open(dirname(this.target), constants.O_RDONLY, cb));
      try {
        await fsCall<void>((cb) => fsync(dirFd, (err) => cb(err, undefined)));
      } finally {
        closeSync(dirFd);
      }
    } catch (err) {
      // The file is complete and in place; only the folder entry may not be on disk yet.
      if (!['EINVAL', 'ENOTSUP', 'EBADF'].includes((err as NodeJS.ErrnoException).code ?? ''))
        throw new CliError(`cannot flush the folder of ${this.name} to disk: ${reasonOf(err)}`);
    } finally {
      this.removeDir();
    }
  }

  /**
   * For a checkpoint (src/export/checkpoint.ts) instead of `discard()`: stops writing (waiting for a
   * write in flight), cuts the temporary file to the length `choose` picks from what is on disk,
   * and moves it to `dest` (same file system; it stays 0600); then removes the temporary folder.
   * Returns the length kept, or undefined when nothing was kept (and the file is removed as usual).
   */
  async keepAs(dest: string, choose: (size: number) => number | undefined): Promise<number | undefined> {
    if (this.settled || this.kind !== 'atomic' || !this.tempPath) {
      this.discard();
      return undefined;
    }
    const stream = this.stream;
    // What was handed over but not yet written goes to disk first (unless writing already failed).
    if (!this.error && !stream.destroyed && !stream.writableFinished)
      await new Promise<void>((ok) => {
        finished(stream, { readable: false }, () => ok());
        stream.end();
      });
    if (!stream.closed)
      await new Promise<void>((ok) => {
        stream.once('close', () => ok());
        stream.destroy();
      });
    let kept: number | undefined;
    try {
      const now = lstatSync(this.tempPath);
      if (!this.inode || now.ino !== this.inode.ino || now.dev !== this.inode.dev)
        throw new Error('the temporary file was replaced');
      kept = choose(now.size);
      if (kept !== undefined) {
        truncateSync(this.tempPath, kept);
        renameSync(this.tempPath, dest);
      }
    } catch {
      kept = undefined;
    }
    this.discard();
    return kept;
  }

  private fail(): CliError {
    const err = this.error ?? new CliError(`cannot write ${this.name}`);
    this.discard();
    return err;
  }

  /** Removes the temporary file and folder. Safe to call more than once, and synchronously on exit. */
  discard(): void {
    if (this.settled) return;
    this.settled = true;
    this.unregister();
    if (this.stream instanceof FdWriter || this.kind === 'direct') this.stream.destroy();
    this.removeTemp();
  }
}

/** Opens a FIFO for writing once a reader is there (checked every 50 ms), or fails when `signal` aborts. */
async function openFifo(path: string, signal?: AbortSignal, onWait?: () => void): Promise<number> {
  const { setTimeout: sleep } = await import('node:timers/promises');
  for (let waited = false; ; waited = true) {
    signal?.throwIfAborted();
    try {
      return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
    }
    if (!waited) onWait?.();
    await sleep(50, undefined, signal ? { signal } : {}).catch(() => {});
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Linux file systems where no file can be created, by their statfs magic number. */
const PSEUDO_FS: Record<number, string> = {
  40864: 'proc',
  1650812274: 'sysfs',
  1667723888: 'cgroup2',
  2613483: 'cgroup',
  1684170528: 'debugfs',
  7377: 'devpts',
};

/**
 * Why a file cannot be created in `folder`, in words: the folder's permissions, a read-only file
 * system, a folder that does not exist, or one that exists on a file system where no file can be
 * created (`/proc`, `/sys`), which the kernel reports as ENOENT.
 */
export function folderReason(err: unknown, folder: string): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  const pseudo = (): string | undefined => {
    try {
      return PSEUDO_FS[Number(statfsSync(folder).type)];
    } catch {
      return undefined;
    }
  };
  const noFiles = (kind: string | undefined) =>
    `files cannot be created in ${folder}${kind ? ` (a ${kind} file system, which holds no user files)` : ' (its file system does not allow it)'}`;
  if (code === 'EACCES' || code === 'EPERM') {
    // sysfs refuses even root with EACCES: not a matter of this user's permissions.
    const kind = pseudo();
    return kind ? noFiles(kind) : `permission denied (this user cannot create files in ${folder})`;
  }
  if (code === 'ENOENT') {
    let isDir = false;
    try {
      isDir = statSync(folder).isDirectory();
    } catch {
      isDir = false;
    }
    if (!isDir) return `no such folder: ${folder}`;
    return noFiles(pseudo());
  }
  return reasonOf(err);
}

/**
 * The first part of `path`'s folders (as given) that exists but is not a folder: `notes.txt` of
 * `notes.txt/x.csv`, `/dev/null` of `/dev/null/x.csv`. Undefined when there is none.
 */
export function fileInPath(path: string): string | undefined {
  const parts = dirname(path).split('/');
  for (let i = 1; i <= parts.length; i++) {
    const prefix = parts.slice(0, i).join('/');
    if (prefix === '' || prefix === '.' || prefix === '..') continue;
    try {
      if (!statSync(prefix).isDirectory()) return prefix;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Whether `path` is an existing folder (following links). */
export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function sameFile(st: Stats, fd: number): boolean {
  try {
    const other = fstatSync(fd);
    return other.dev === st.dev && other.ino === st.ino;
  } catch {
    return false;
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Paths that name a process's descriptors: never a place for a temporary file, even onto a regular file. */
function isSpecialPath(abs: string): boolean {
  return /^\/(proc\/|dev\/(fd\/|std(in|out|err)$))/.test(abs);
}

interface Resolved {
  /** The path after every symlink (the last one may not exist). */
  path: string;
  /** Set when the path names a descriptor in a /proc/PID/fd (or /dev/fd) folder. */
  fd?: number;
  /** The descriptor's own link text (e.g. `pipe:[123]`, `/tmp/fifo`), when readable. */
  link?: string;
}

const FD_DIR = /^\/proc\/(?:self|thread-self|\d+)(?:\/task\/\d+)?\/fd$|^\/dev\/fd$/;

/**
 * Follows symlinks one at a time (40 at most, as the kernel does), each folder through realpath,
 * stopping at a missing name (a link to a file not yet there) or at a descriptor folder, whose
 * entries are magic links that must not be read as paths.
 */
export async function resolveTarget(abs: string): Promise<Resolved> {
  const { readlink, lstat } = await import('node:fs/promises');
  let cur = abs;
  for (let hops = 0; hops <= 40; hops++) {
    const dir = await realpath(dirname(cur));
    cur = join(dir, basename(cur));
    if (FD_DIR.test(dir) && /^\d+$/.test(basename(cur))) {
      const link = await readlink(cur).catch(() => undefined);
      return { path: cur, fd: Number(basename(cur)), ...(link !== undefined ? { link } : {}) };
    }
    let st: Stats;
    try {
      st = await lstat(cur);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { path: cur };
      throw err;
    }
    if (!st.isSymbolicLink()) return { path: cur };
    cur = resolve(dir, await readlink(cur));
  }
  throw Object.assign(new Error('too many levels of symbolic links'), { code: 'ELOOP' });
}

/**
 * A descriptor above 2 named as a path (`-o /dev/fd/5`) may be one Node itself holds (its event
 * loop's epoll and eventfd, its signal pipes): writing there hangs or crashes the process. Only
 * what a caller can have handed over is accepted: a regular file, a character device, or a named
 * FIFO (its link is a path; Node's own pipes are anonymous, `pipe:[N]`).
 */
function checkDescriptor(target: string, where: Resolved, st: Stats): void {
  const named = where.link?.startsWith('/') ?? false;
  if (st.isFile() || st.isCharacterDevice() || (st.isFIFO() && named)) return;
  const what = st.isFIFO()
    ? 'an anonymous pipe'
    : st.isSocket()
      ? 'a socket'
      : 'not a file, device or named pipe';
  throw new CliError(
    `cannot write ${target}: descriptor ${where.fd} is ${what} (it may be one of the program's own)`,
    2,
    'Write to standard output instead: leave out -o, or use -o /dev/stdout',
  );
}
