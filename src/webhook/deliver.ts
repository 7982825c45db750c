import type { IncomingHttpHeaders } from 'node:http';

/** One POST of a test delivery to a receiver: its status and how long it took to answer. */
export interface DeliveryResult {
  status?: number;
  statusText?: string;
  /** Milliseconds from sending to the answer's headers. */
  ms: number;
  error?: string;
  headers?: IncomingHttpHeaders;
}

export async function deliver(
  url: URL,
  headers: Array<[string, string]>,
  body: Buffer,
  opts: { timeoutMs: number; signal: AbortSignal },
): Promise<DeliveryResult> {
  const mod = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve, reject) => {
    const req = mod.request(url, {
      method: 'POST',
      headers: Object.fromEntries([...headers, ['Content-Length', String(body.length)]]),
      signal: opts.signal,
      timeout: opts.timeoutMs,
    });
    req.on('response', (res) => {
      const ms = elapsed();
      // The body is not shown (a receiver's page may be anything): read and drop it.
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          ms,
          headers: res.headers,
        }),
      );
      res.on('error', () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          ms,
          headers: res.headers,
        }),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (opts.signal.aborted) return reject(opts.signal.reason);
      resolve({ ms: elapsed(), error: err.code ? `${err.code} (${err.message})` : err.message });
    });
    req.end(body);
  });
}

/** The request as it goes on the wire (request line, headers, blank line, body): what `webhook verify --request` reads. */
export function rawRequest(url: URL, headers: Array<[string, string]>, body: Buffer): Buffer {
  const lines = [
    `POST ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    ...headers.map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${body.length}`,
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), body]);
}
