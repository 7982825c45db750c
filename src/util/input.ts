import { readFile, stat } from 'node:fs/promises';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
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
    return readAll(ctx.io.stdin, maxBytes, `standard input (${flag} -)`);
  }
  let size: number;
  try {
    const s = await stat(source);
    if (s.isDirectory()) throw new UsageError(`${flag}: ${source} is a folder, not a file`);
    size = s.size;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(
      `${flag}: cannot read ${source}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  }
  if (size > maxBytes)
    throw new UsageError(`${flag}: ${source} is larger than ${formatBytes(maxBytes)}`, 'Nothing was sent.');
  return readFile(source);
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
