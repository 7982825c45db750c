import type { Readable } from 'node:stream';
import { UsageError } from '../errors.js';

/** Reads a whole stream as bytes, refusing more than `maxBytes` (a clear message, not a hang or a crash). */
export async function readAll(stream: Readable, maxBytes: number, what = 'standard input'): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > maxBytes) {
      stream.destroy?.();
      throw new UsageError(`${what} is larger than ${formatBytes(maxBytes)}`, 'Nothing was sent.');
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round(n / (1024 * 1024))} MiB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KiB`;
  return `${n} bytes`;
}
