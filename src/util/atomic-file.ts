import { randomBytes } from 'node:crypto';
import { createWriteStream, renameSync, statSync, unlinkSync, type WriteStream } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError } from '../errors.js';
import { onForcedExit } from './cleanup.js';

/**
 * A file written under a temporary name in the same folder, mode 0600 from its creation (it may
 * hold patient data), and renamed over the target only when complete: a failed or interrupted
 * run never leaves a partial file that looks complete.
 */
export class AtomicFile {
  readonly target: string;
  readonly tempPath: string;
  readonly stream: WriteStream;
  private settled = false;
  private unregister: () => void = () => {};

  private constructor(target: string, stream: WriteStream, tempPath: string) {
    this.target = target;
    this.stream = stream;
    this.tempPath = tempPath;
  }

  static async open(target: string): Promise<AtomicFile> {
    const abs = resolve(target);
    let isDir = false;
    try {
      isDir = statSync(abs).isDirectory();
    } catch {
      // no such file yet: it will be created
    }
    if (isDir)
      throw new CliError(
        `cannot write ${target}: it is a folder`,
        2,
        'Give a file name, e.g. -o referrals.csv',
      );
    const tempPath = join(dirname(abs), `.${basename(abs)}.${randomBytes(6).toString('hex')}.partial`);
    const stream = createWriteStream(tempPath, { flags: 'wx', mode: 0o600 });
    await new Promise<void>((ok, fail) => {
      stream.once('open', () => ok());
      stream.once('error', (err: NodeJS.ErrnoException) =>
        fail(
          new CliError(
            `cannot write ${target}: ${err.code === 'ENOENT' ? 'no such folder' : err.message}`,
            2,
          ),
        ),
      );
    });
    const file = new AtomicFile(abs, stream, tempPath);
    file.unregister = onForcedExit(() => file.discard());
    return file;
  }

  /** Flushes, closes and renames into place. */
  async commit(): Promise<void> {
    if (this.settled) return;
    await new Promise<void>((ok, fail) => {
      this.stream.once('error', fail);
      this.stream.end(() => ok());
    });
    try {
      renameSync(this.tempPath, this.target);
    } catch (err) {
      this.discard();
      throw new CliError(`cannot put the finished file at ${this.target}: ${(err as Error).message}`);
    }
    this.settled = true;
    this.unregister();
  }

  /** Removes the temporary file. Safe to call more than once, and synchronously on exit. */
  discard(): void {
    if (this.settled) return;
    this.settled = true;
    this.unregister();
    this.stream.destroy();
    try {
      unlinkSync(this.tempPath);
    } catch {
      // already gone
    }
  }
}
