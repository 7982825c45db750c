import {
  close,
  closeSync,
  constants,
  createReadStream,
  open as fsOpen,
  fstatSync,
  lstatSync,
  read,
  type Stats,
  statSync,
} from 'node:fs';
import { Readable } from 'node:stream';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { mine, userName } from '../fs/write-file.js';
import { formatBytes, readAll } from './stdin.js';

/** The largest request body read from a file or stdin; anything bigger is refused before sending. */
export const MAX_INPUT_BYTES = 10 * 1024 * 1024;

/** Reads FILE, or standard input for "-", as bytes, with a size cap and clear messages. */
export async function readInput(
  ctx: Context,
  source: string,
  flag: string,
  maxBytes = MAX_INPUT_BYTES,
): Promise<Buffer> {
  if (source === '-') {
    if (ctx.io.stdinIsTTY) ctx.note('Reading from standard input; end with Ctrl-D.');
    return readAll(ctx.io.stdin, maxBytes, `standard input (${flag} -)`, ctx.signal);
  }
  // As the webhook secret file: what a command reads on your behalf (and may send under your token)
  // comes from a file that is yours, which no other user can change or feed (a FIFO, a symlink).
  const problem = notYoursAlone(source, 0o002);
  if (problem)
    throw new UsageError(
      `${flag} ${source} ${problem.why}; it is read only from a file of your own`,
      'Copy it into a file of your own (cp, then chmod go-w) and name that copy, or pipe it (-).',
    );
  return readFileCapped(source, flag, maxBytes, ctx.signal);
}

/**
 * Why a file is not to be trusted as yours: another user's symlink, a file of another user (root
 * aside), or one that `writableBy` (mode bits: 0o022 group and others, 0o002 others) may change.
 */
export function notYoursAlone(
  path: string,
  writableBy: number,
): { why: string; symlink: boolean } | undefined {
  let link: Stats;
  let st: Stats;
  try {
    link = lstatSync(path);
    st = statSync(path);
  } catch {
    return undefined; // the read names what is wrong
  }
  const foreign = (s: Stats) => !mine(s) && s.uid !== 0;
  if (link.isSymbolicLink() && foreign(link))
    return { why: `is a symlink owned by ${userName(link.uid)}`, symlink: true };
  if (!st.isDirectory() && foreign(st))
    return { why: `is ${st.isFIFO() ? 'a FIFO' : 'a file'} owned by ${userName(st.uid)}`, symlink: false };
  if (st.isFile() && (st.mode & writableBy) !== 0)
    return { why: `is writable by other users (mode ${(st.mode & 0o777).toString(8)})`, symlink: false };
  return undefined;
}

/** One capped reader for a path, whatever it names. */
export async function readFileCapped(
  path: string,
  flag: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const cannot = (err: unknown) =>
    new UsageError(
      `${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  if (signal.aborted) throw signal.reason;
  let fd: number;
  try {
    fd = await new Promise<number>((resolve, reject) =>
      fsOpen(path, constants.O_RDONLY | constants.O_NONBLOCK, (err, n) => (err ? reject(err) : resolve(n))),
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EISDIR')
      throw new UsageError(`${flag}: ${path} is a folder, not a file`);
    throw cannot(err);
  }
  let stream: Readable;
  let owned = true; // until a stream takes the descriptor over
  try {
    const s = fstatSync(fd);
    if (s.isDirectory()) throw new UsageError(`${flag}: ${path} is a folder, not a file`);
    if (s.isFile() && s.size > maxBytes)
      throw new UsageError(`${flag}: ${path} is larger than ${formatBytes(maxBytes)}`, 'Nothing was sent.');
    if (s.isFIFO() || s.isSocket()) {
      // Read through the event loop; the socket owns (and closes) the descriptor.
      const { Socket } = await import('node:net');
      stream = new Socket({ fd, readable: true, writable: false });
      owned = false;
    } else if (s.isCharacterDevice()) {
      // A terminal or serial line may block for ever: a blocking read would outlive any signal, so poll.
      stream = nonBlockingDeviceStream(fd);
      owned = false;
    } else {
      stream = createReadStream('', { fd, highWaterMark: 64 * 1024 });
      owned = false;
    }
  } catch (err) {
    if (owned) closeSync(fd);
    if (err instanceof UsageError) throw err;
    throw cannot(err);
  }
  try {
    return await readAll(stream, maxBytes, `${flag}: ${path}`, signal);
  } catch (err) {
    if (err instanceof UsageError || err === signal.reason) throw err;
    throw cannot(err);
  }
}

// A stream over a non-blocking character device: each read is a non-blocking read(2) in the thread pool (it
// returns at once), and "nothing yet" (EAGAIN) is retried on a timer that backs off.
function nonBlockingDeviceStream(fd: number): Readable {
  let timer: NodeJS.Timeout | undefined;
  let wait = 5;
  let busy = false;
  let closeWhenIdle: ((err: Error | null) => void) | undefined;
  const closeFd = (cb: (err: Error | null) => void) => close(fd, () => cb(null));
  const stream = new Readable({
    highWaterMark: 64 * 1024,
    read(size) {
      const attempt = () => {
        timer = undefined;
        busy = true;
        const buf = Buffer.allocUnsafe(Math.max(1, Math.min(size, 64 * 1024)));
        read(fd, buf, 0, buf.length, null, (err, n) => {
          busy = false;
          if (closeWhenIdle) return closeFd(closeWhenIdle);
          if (stream.destroyed) return;
          if (err) {
            if ((err as NodeJS.ErrnoException).code === 'EAGAIN') {
              timer = setTimeout(attempt, wait);
              wait = Math.min(100, wait * 2);
              return;
            }
            // EIO: a terminal whose other side closed; treat as the end, like a hung-up line.
            if ((err as NodeJS.ErrnoException).code === 'EIO') return void stream.push(null);
            return void stream.destroy(err);
          }
          wait = 5;
          stream.push(n === 0 ? null : buf.subarray(0, n));
        });
      };
      attempt();
    },
    destroy(err, cb) {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (busy) closeWhenIdle = () => cb(err);
      else closeFd(() => cb(err));
    },
  });
  return stream;
}

/** Parses JSON text or explains where it breaks (exit 2, nothing sent). */
export function parseJsonInput(bytes: Buffer, what: string): unknown {
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw new UsageError(`${what} is empty`);
  if (text.includes('\u0000')) throw new UsageError(`${what} is not JSON (it holds binary data)`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`, 'Nothing was sent.');
  }
}
