import type { Readable } from 'node:stream';
import { UsageError } from '../errors.js';

// Stops (and destroys the stream) as soon as `maxBytes` is passed: /dev/zero costs at most the cap.
export async function readAll(
  stream: Readable,
  maxBytes: number,
  what = 'standard input',
  signal?: AbortSignal,
): Promise<Buffer> {
  if (signal?.aborted) {
    stream.destroy?.();
    throw signal.reason;
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: unknown, value?: Buffer) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      // A late error from the destroyed stream must not become an unhandled 'error' event.
      stream.on('error', () => {});
      if (err !== undefined) reject(err);
      else resolve(value!);
    };
    const onAbort = () => {
      stream.destroy?.();
      finish(signal!.reason);
    };
    const onData = (chunk: Buffer | string) => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buf.length;
      if (size > maxBytes) {
        stream.pause();
        stream.destroy?.();
        finish(new UsageError(`${what} is larger than ${formatBytes(maxBytes)}`, 'Nothing was sent.'));
        return;
      }
      chunks.push(buf);
    };
    const onEnd = () => finish(undefined, Buffer.concat(chunks, size));
    const onError = (err: Error) => finish(err);
    signal?.addEventListener('abort', onAbort, { once: true });
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round(n / (1024 * 1024))} MiB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KiB`;
  return `${n} ${n === 1 ? 'byte' : 'bytes'}`;
}
