import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { count } from '../util/plural.js';

interface DeliveryResult {
  status?: number;
  statusText?: string;
  ms: number;
  error?: string;
  /** Why there was no answer: the deadline passed, or the request failed. */
  timedOut?: boolean;
  failure?: NodeJS.ErrnoException;
  headers?: IncomingHttpHeaders;
  /** Something odd about the answer's body (cut short, endless): the status stands. */
  note?: string;
  /** The start of the answer's body: a receiver that refuses often says why there. */
  start?: Buffer;
}

const MAX_ANSWER_BODY = 64 * 1024;
const MAX_ANSWER_BODY_MS = 2000;
const START_BYTES = 512;

/**
 * POSTs once and reports the status as soon as the head arrives; a little of the body is read and
 * the connection closed. The timeout is one deadline for the whole exchange, not an idle timer, so
 * a receiver that drips or streams forever cannot hold the command.
 */
export async function deliver(
  url: URL,
  headers: OutgoingHttpHeaders,
  body: Buffer,
  opts: { timeoutMs: number; signal?: AbortSignal; settleAtHead?: boolean },
): Promise<DeliveryResult> {
  const mod = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve, reject) => {
    let answered = false;
    let timedOut = false;
    let interim = 0;
    const req = mod.request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(body.length) },
      signal: opts.signal,
      agent: false,
    });
    const deadline = setTimeout(() => {
      if (answered) return;
      const got = req.socket?.bytesRead ?? 0;
      const why =
        interim > 0
          ? `no final answer within ${opts.timeoutMs} ms (only ${count(interim, 'interim 1xx answer')})`
          : got > 0
            ? `no complete answer within ${opts.timeoutMs} ms (${count(got, 'byte')} of a status and headers that never ended)`
            : `no answer within ${opts.timeoutMs} ms`;
      timedOut = true;
      req.destroy(new Error(why));
    }, opts.timeoutMs);
    req.on('information', () => {
      interim++;
    });
    req.on('response', (res) => {
      answered = true;
      clearTimeout(deadline);
      const result: DeliveryResult = {
        status: res.statusCode ?? 0,
        statusText: res.statusMessage ?? '',
        ms: elapsed(),
        headers: res.headers,
      };
      const waitMs = Math.max(0, Math.min(opts.timeoutMs - elapsed(), MAX_ANSWER_BODY_MS));
      // With settleAtHead the body is still read and dropped, but nothing waits for it.
      const drained = drainBody(req, res, waitMs);
      if (opts.settleAtHead) resolve(result);
      else drained.then(({ note, start }) => resolve({ ...result, ...(note ? { note } : {}), start }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      if (answered) return; // the answer's own handlers settle it
      if (opts.signal?.aborted) return reject(opts.signal.reason);
      const error = err.code ? `${err.code} (${err.message})` : err.message;
      resolve({ ms: elapsed(), error, failure: err, ...(timedOut ? { timedOut } : {}) });
    });
    req.end(body);
  });
}

/** Reads a little of the body (its start kept), then closes; with a note when the body was odd. */
function drainBody(
  req: ClientRequest,
  res: IncomingMessage,
  waitMs: number,
): Promise<{ note?: string; start: Buffer }> {
  const length = Number(res.headers['content-length']);
  const expected =
    res.headers['content-length'] !== undefined && Number.isSafeInteger(length) ? length : undefined;
  return new Promise((resolve) => {
    let got = 0;
    let done = false;
    const kept: Buffer[] = [];
    const finish = (note?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ note, start: Buffer.concat(kept).subarray(0, START_BYTES) });
    };
    const timer = setTimeout(
      () =>
        finish(
          `the body was still coming ${waitMs} ms after the status (${count(got, 'byte')} read); closed`,
        ),
      waitMs,
    );
    res.on('data', (chunk: Buffer) => {
      if (got < START_BYTES) kept.push(chunk);
      got += chunk.length;
      if (got > MAX_ANSWER_BODY) finish(`the body is longer than ${MAX_ANSWER_BODY} bytes; closed`);
    });
    res.on('end', () => finish());
    const cut = () =>
      finish(
        expected !== undefined && got < expected
          ? `the body was cut short (${got} of ${expected} bytes)`
          : 'the connection closed before the body ended',
      );
    res.on('aborted', cut);
    res.on('error', cut);
    res.on('close', () => {
      if (!res.complete) cut();
      else finish();
    });
  });
}

/** The request as it goes on the wire: what `webhook verify --request` reads. */
export function rawRequest(url: URL, headers: Array<[string, string]>, body: Buffer): Buffer {
  const lines = [
    `POST ${url.pathname}${url.search} HTTP/1.1`,
    `Host: ${url.host}`,
    ...headers.map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${body.length}`,
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), body]);
}
