import {
  accessSync,
  constants as C,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  type Stats,
  statfsSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { isatty } from 'node:tty';
import { CliError } from '../errors.js';
import {
  describeFile,
  FdWriter,
  mine,
  reasonOf,
  sameFile,
  statIfAny,
  TempFile,
  userName,
} from '../fs/write-file.js';
import { NAME_MAX } from '../util/hidden-name.js';

type Kind = 'atomic' | 'direct' | 'stdout';

/**
 * Where an export goes, whole or not at all: a regular file through TempFile; a device, FIFO or
 * handed-over descriptor as it is; or stdout. `commit()` throws a kept write error naming the target.
 */
export class AtomicFile {
  readonly failed: AbortSignal;
  private error: CliError | undefined;
  private settled = false;

  private constructor(
    private readonly name: string,
    readonly target: string,
    readonly kind: Kind,
    readonly stream: Writable,
    private readonly temp?: TempFile,
  ) {
    const failed = new AbortController();
    this.failed = failed.signal;
    stream.on('error', (err) => {
      this.error ??= this.writeError(err);
      failed.abort(this.error);
    });
  }

  /** Whether what is written here lands on a terminal (standard output one, or -o /dev/tty and the like). */
  onTerminal(stdoutIsTTY: boolean): boolean {
    if (this.kind === 'stdout') return stdoutIsTTY;
    return this.kind === 'direct' && this.stream instanceof FdWriter && isatty(this.stream.fd);
  }

  get writeFailure(): CliError | undefined {
    return this.error;
  }

  private writeError(err: unknown): CliError {
    return new CliError(`cannot write ${this.name}: ${reasonOf(err)}`);
  }

  /** A regular file or device there is written through the descriptor, so a full disk is an error. */
  static stdout(stdout: Writable): AtomicFile {
    let st: Stats | undefined;
    try {
      if (stdout === process.stdout && !isatty(1)) st = fstatSync(1);
    } catch {}
    const viaFd = st !== undefined && (st.isFile() || st.isCharacterDevice());
    const stream = viaFd ? new FdWriter(1, false, Boolean(st?.isFile())) : stdout;
    return new AtomicFile('standard output', 'standard output', 'stdout', stream);
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
    const fail = (err: unknown) => {
      if (err instanceof ForeignEntry) return refuseForeign(target, err);
      const code = (err as NodeJS.ErrnoException)?.code;
      const file = code === 'ENOTDIR' ? fileInPath(target) : undefined;
      return new CliError(`cannot write ${target}: ${file ? `${file} is not a folder` : reasonOf(err)}`, 2);
    };
    const { where, st } = locate(target, abs, fail);

    // The same file as our standard output (/dev/stdout, /dev/fd/1): written there, never reopened.
    const special = where.fd !== undefined || /^\/(proc\/|dev\/(fd\/|std(in|out|err)$))/.test(abs);
    if (st && opts.stdout && sameAsStdout(st) && (abs !== where.path || !st.isFile() || special)) {
      return new AtomicFile(target, abs, 'stdout', AtomicFile.stdout(opts.stdout).stream);
    }
    if (st && (!st.isFile() || special))
      return new AtomicFile(target, abs, 'direct', await openDirect(target, where, st, opts, fail));
    // A file this user may not write is not replaced behind its owner's back (as `>` would refuse).
    if (st && !writable(where.path))
      throw new CliError(
        `cannot write ${target}: permission denied (the file is read-only for this user)`,
        2,
        'Choose another file name, or make the file writable first.',
      );
    let temp: TempFile;
    try {
      temp = new TempFile(where.path);
    } catch (err) {
      throw new CliError(`cannot write ${target}: ${folderReason(err, dirname(where.path))}`, 2);
    }
    return new AtomicFile(target, where.path, 'atomic', temp.stream, temp);
  }

  async commit(): Promise<void> {
    if (this.settled) return;
    if (this.error) throw this.fail();
    if (this.kind === 'stdout' && !(this.stream instanceof FdWriter)) {
      this.settled = true;
      return;
    }
    try {
      if (this.temp) await this.temp.commit();
      else
        await new Promise<void>((ok, fail) => {
          this.stream.once('finish', ok).once('error', fail);
          this.stream.end();
        });
    } catch (err) {
      const moved = (err as NodeJS.ErrnoException).code === 'EMOVED';
      this.error ??= moved
        ? new CliError(
            `cannot put the finished file at ${this.name}: ${(err as Error).message}; it was emptied`,
          )
        : this.writeError(err);
      throw this.fail();
    }
    this.settled = true;
    if (!this.temp) this.stream.destroy();
  }

  /** For a checkpoint instead of `discard()`: the file cut to the length `choose` picks, moved to `dest`. */
  async keepAs(dest: string, choose: (size: number) => number | undefined): Promise<number | undefined> {
    const temp = this.temp;
    if (this.settled || !temp) {
      this.discard();
      return undefined;
    }
    this.settled = true;
    await temp.end().catch(() => {});
    let kept: number | undefined;
    try {
      kept = choose(fstatSync(temp.fd).size);
      if (kept !== undefined) {
        ftruncateSync(temp.fd, kept);
        temp.commitSync(dest);
      }
    } catch {
      kept = undefined;
    }
    temp.discard();
    return kept;
  }

  private fail(): CliError {
    const err = this.error ?? new CliError(`cannot write ${this.name}`);
    this.discard();
    return err;
  }

  /** Safe to call more than once, and synchronously on exit. */
  discard(): void {
    if (this.settled) return;
    this.settled = true;
    if (this.temp) this.temp.discard();
    else if (this.kind === 'direct' || this.stream instanceof FdWriter) this.stream.destroy();
  }
}

/** Whether users other than me may create or remove names here: writable by group or others, or owned by another user but root. */
const othersMayWrite = (folder: Stats): boolean =>
  (folder.mode & 0o022) !== 0 || (folder.uid !== 0 && !mine(folder));

/** An existing name in a folder others can write to that belongs to someone else: never used. */
class ForeignEntry extends Error {
  readonly code = 'EFOREIGN';
  constructor(
    readonly path: string,
    readonly st: Stats,
  ) {
    super(`${path} belongs to ${userName(st.uid)}, in a folder others can write to`);
  }
}

const STICKY = 0o1000;

/**
 * A folder files are saved into (`referrals download -D`): reached through no symlink another user
 * planted where others can write, ours or root's, and not open to others unless sticky (as /tmp is,
 * where what we make stays ours); and every folder above it is ours or root's and closed to others
 * (or sticky, with the folder below ours or root's), so no other user can swap the folder, or one
 * above it, for a symlink between this check and the writes. Else exit 2, before any request.
 * Returns the folder's real path: the files are written there, never through the path as given.
 */
export function checkSaveFolder(dir: string, given: string): string {
  const refuse = (why: string, hint: string) =>
    new CliError(`--dir: will not save into ${given}: ${why}`, 2, hint);
  const elsewhere =
    'Save into a folder only you can write to, e.g. one in your home folder (mkdir -m 700 DIR).';
  let st: Stats;
  let path: string;
  try {
    path = resolveTarget(resolve(dir)).path;
    st = statSync(path);
  } catch (err) {
    if (err instanceof ForeignEntry)
      throw refuse(
        `${err.path} is ${describeFile(err.st)} owned by ${userName(err.st.uid)}, in ${dirname(err.path)}, a folder others can write to; it is not followed (the kernel's fs.protected_symlinks rule)`,
        elsewhere,
      );
    throw new CliError(`--dir: cannot use ${given}: ${reasonOf(err)}`, 2);
  }
  if (st.uid !== 0 && !mine(st))
    throw refuse(
      `${path} belongs to ${userName(st.uid)}, who could read or replace what is saved there`,
      elsewhere,
    );
  if ((st.mode & 0o022) !== 0 && (st.mode & STICKY) === 0)
    throw refuse(
      `${path} is writable by others (mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}), who could replace what is saved there`,
      `${elsewhere} Or make it yours alone: chmod 700 ${given}`,
    );
  const above = foreignAbove(path);
  if (above) throw refuse(above, elsewhere);
  return path;
}

/** Why another user could move `path` or a folder above it (a real path: no symlink in it), or undefined. */
export function foreignAbove(path: string): string | undefined {
  for (let child = path; child !== dirname(child); child = dirname(child)) {
    const parent = dirname(child);
    let p: Stats;
    let c: Stats;
    try {
      [p, c] = [lstatSync(parent), lstatSync(child)];
    } catch (err) {
      return `cannot check ${parent}: ${reasonOf(err)}`;
    }
    if (c.isSymbolicLink()) return `${child} became a symlink while it was checked`;
    const swap = `who could move ${child} away and put a link to another folder in its place`;
    if (p.uid !== 0 && !mine(p)) return `${parent} belongs to ${userName(p.uid)}, ${swap}`;
    const trusted = c.uid === 0 || mine(c);
    if ((p.mode & 0o022) !== 0 && !((p.mode & STICKY) !== 0 && trusted))
      return `${parent} is writable by others (mode ${(p.mode & 0o7777).toString(8).padStart(4, '0')})${p.mode & STICKY ? ` and ${child} belongs to ${userName(c.uid)}` : ''}, ${swap}`;
  }
  return undefined;
}

function checkShared(path: string, st: Stats): void {
  if (mine(st)) return;
  if (othersMayWrite(statSync(dirname(path)))) throw new ForeignEntry(path, st);
}

function locate(
  target: string,
  abs: string,
  fail: (err: unknown) => CliError,
): { where: Resolved; st?: Stats } {
  let where: Resolved | undefined;
  let st: Stats | undefined;
  try {
    where = resolveTarget(abs);
    if (where.fd === undefined) {
      const own = statIfAny(where.path);
      if (own) checkShared(where.path, own);
    }
    st = statIfAny(where.path, true);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EACCES')
      throw new CliError(
        `cannot write ${target}: permission denied (this user cannot open the folder ${dirname(abs)})`,
        2,
      );
    if (where?.fd !== undefined && ['ENOENT', 'EBADF'].includes((err as NodeJS.ErrnoException).code ?? ''))
      throw notOpen(target, where.fd);
    throw fail(err);
  }
  if (where.fd !== undefined && !st) throw notOpen(target, where.fd);
  if (where.fd !== undefined && where.fd > 2 && st) checkDescriptor(target, where.fd, st);
  if (st?.isDirectory())
    throw new CliError(
      `cannot write ${target}: it is a folder`,
      2,
      'Give a file name, e.g. -o referrals.csv',
    );
  return st ? { where, st } : { where };
}

async function openDirect(
  target: string,
  where: Resolved,
  st: Stats,
  opts: { signal?: AbortSignal; onWait?: () => void },
  fail: (err: unknown) => CliError,
): Promise<Writable> {
  // Never followed at the last name (the path is resolved): O_NOFOLLOW, except a descriptor's magic link.
  const flags = C.O_WRONLY | (where.fd === undefined ? C.O_NOFOLLOW : 0);
  let fd: number;
  try {
    fd = st.isFIFO()
      ? await openFifo(where.path, flags, opts.signal, opts.onWait)
      : openSync(where.path, flags | C.O_APPEND);
    if (where.fd === undefined) checkShared(where.path, fstatSync(fd));
  } catch (err) {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if ((err as NodeJS.ErrnoException).code === 'ENXIO' && st.isSocket())
      throw new CliError(`cannot write ${target}: it is a socket`, 2);
    throw fail(err);
  }
  if (st.isFIFO()) {
    // Written without blocking: a reader that stops reading never pins a thread, so Ctrl-C still ends the process.
    const { Socket } = await import('node:net');
    return new Socket({ fd, readable: false, writable: true });
  }
  return new FdWriter(fd, true, st.isFile());
}

function refuseForeign(target: string, err: ForeignEntry): CliError {
  const rule = err.st.isSymbolicLink()
    ? 'protected_symlinks'
    : err.st.isFIFO()
      ? 'protected_fifos'
      : 'protected_regular';
  return new CliError(
    `cannot write ${target}: ${err.path} is ${describeFile(err.st)} owned by ${userName(err.st.uid)}, in ${dirname(err.path)}, a folder others can write to; it is not used, following the kernel's fs.${rule} rule`,
    2,
    `Write somewhere only you can write (e.g. a folder in your home), or have ${userName(err.st.uid)} remove it.`,
  );
}

const USE_STDOUT = 'Write to standard output instead: leave out -o, or use -o /dev/stdout';
const notOpen = (target: string, fd: number) =>
  new CliError(`cannot write ${target}: descriptor ${fd} is not open`, 2, USE_STDOUT);

function sameAsStdout(st: Stats): boolean {
  try {
    return sameFile(fstatSync(1), st);
  } catch {
    return false;
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, C.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Opens a FIFO for writing once a reader is there, or fails when `signal` aborts. */
async function openFifo(
  path: string,
  flags: number,
  signal?: AbortSignal,
  onWait?: () => void,
): Promise<number> {
  const { setTimeout: sleep } = await import('node:timers/promises');
  for (let waited = false; ; waited = true) {
    signal?.throwIfAborted();
    try {
      return openSync(path, flags | C.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
    }
    if (!waited) onWait?.();
    await sleep(50, undefined, signal ? { signal } : {}).catch(() => {});
  }
}

/**
 * A descriptor above 2 named as a path may be one Node itself holds (writing there hangs): only one
 * handed over through exec, a regular file, a character device or a named FIFO is accepted.
 */
function checkDescriptor(target: string, fd: number, st: Stats): void {
  let handedOver = false;
  try {
    const flags = Number.parseInt(
      /^flags:\s*(\d+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '',
      8,
    );
    handedOver = (flags & 0o2000000) === 0 && (flags & 3) !== 0;
  } catch {}
  let named = false;
  try {
    named = readlinkSync(`/proc/self/fd/${fd}`).startsWith('/');
  } catch {}
  if (handedOver || st.isFile() || st.isCharacterDevice() || (st.isFIFO() && named)) return;
  const kind = st.isFIFO()
    ? 'an anonymous pipe'
    : st.isSocket()
      ? 'a socket'
      : 'not a file, device or named pipe';
  throw new CliError(
    `cannot write ${target}: descriptor ${fd} is ${kind} (it may be one of the program's own)`,
    2,
    USE_STDOUT,
  );
}

export interface Resolved {
  path: string;
  fd?: number;
}

const FD_DIR = /^\/proc\/(?:self|thread-self|\d+)(?:\/task\/\d+)?\/fd$|^\/dev\/fd$/;

/**
 * Resolves an absolute path one name at a time (40 links at most, as the kernel does), never through
 * a symlink not ours in a folder others can write to (the kernel's protected_symlinks rule).
 */
export function resolveTarget(abs: string): Resolved {
  let parts = abs.split('/').filter((p) => p !== '' && p !== '.');
  let done = '/';
  for (let hops = 0; parts.length > 0; ) {
    const name = parts.shift() as string;
    if (name === '..') {
      done = dirname(done);
      continue;
    }
    const cur = join(done, name);
    if (parts.length === 0 && FD_DIR.test(done) && /^\d+$/.test(name)) return { path: cur, fd: Number(name) };
    let st: Stats;
    try {
      st = lstatSync(cur);
    } catch (err) {
      if (parts.length === 0 && (err as NodeJS.ErrnoException).code === 'ENOENT') return { path: cur };
      throw err;
    }
    if (st.isSymbolicLink()) {
      checkShared(cur, st);
      if (++hops > 40) throw Object.assign(new Error('too many levels of symbolic links'), { code: 'ELOOP' });
      const to = readlinkSync(cur);
      if (to.startsWith('/')) done = '/';
      parts = [...to.split('/').filter((p) => p !== '' && p !== '.'), ...parts];
      continue;
    }
    if (parts.length > 0 && !st.isDirectory())
      throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    done = cur;
  }
  return { path: done };
}

const PSEUDO_FS: Record<number, string> = {
  40864: 'proc',
  1650812274: 'sysfs',
  1667723888: 'cgroup2',
  2613483: 'cgroup',
  1684170528: 'debugfs',
  7377: 'devpts',
};

function folderReason(err: unknown, folder: string): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  let kind: string | undefined;
  try {
    kind = PSEUDO_FS[Number(statfsSync(folder).type)];
  } catch {}
  const noFiles = `files cannot be created in ${folder}${kind ? ` (a ${kind} file system, which holds no user files)` : ' (its file system does not allow it)'}`;
  if (code === 'EACCES' || code === 'EPERM')
    return kind ? noFiles : `permission denied (this user cannot create files in ${folder})`;
  if (code === 'ENOENT') return isFolder(folder) ? noFiles : `no such folder: ${folder}`;
  return reasonOf(err);
}

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

export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
