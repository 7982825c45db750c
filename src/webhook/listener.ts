import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deliver } from './deliver.js';
import type { Secret } from './secret.js';
import type { DigestEncoding, HeaderNames } from './sign.js';
import { type Verdict, verifyDelivery } from './verify.js';

interface ListenerOptions {
  port: number;
  path: string | undefined;
  forwardTo: string | undefined;
  tolerance: number;
  secret: Secret;
  encoding: DigestEncoding | 'auto';
  names: HeaderNames;
  allowUnsigned: boolean;
  maxBodyBytes: number;
  /** One deadline for each forward (connect, head and the short body read), not an idle timer. */
  forwardTimeoutMs?: number;
  /** Host names (a tunnel's) deliveries may be addressed to, besides 127.0.0.1/localhost:PORT. */
  allowHosts?: readonly string[];
  now: () => number;
  onDelivery: (d: Delivery) => void;
  onRefusedHost?: (host: string) => void;
}

export interface Delivery {
  receivedAt: string;
  path: string;
  verdict: Verdict;
  duplicate: boolean;
  forwarded: number | string | undefined;
  status: number;
  /** The request as received (the body as read, chunked decoded), for --save. */
  request: { method: string; target: string; headers: Array<[string, string]>; body: Buffer };
}

/** Headers that belong to one connection, not to the message (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
  'expect',
]);

/**
 * A local receiver on 127.0.0.1: verifies each delivery, notes a repeated event_id, and with
 * --forward-to passes the exact bytes on, answering with the target's status.
 */
export async function startListener(opts: ListenerOptions) {
  const seen = new Set<string>();
  const counts = { received: 0, valid: 0, unsigned: 0, invalid: 0, duplicates: 0 };
  let port = 0;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (refused(req, res, path, port, opts)) return;
    readBody(req, opts.maxBodyBytes).then(
      async (body) => {
        if (body === undefined) {
          res
            .writeHead(413, { 'content-type': 'text/plain' })
            .end(`body larger than ${opts.maxBodyBytes} bytes\n`);
          return;
        }
        const { status, reply } = await receive(opts, req, path, body, seen, counts);
        res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(reply)}\n`);
      },
      () => {
        if (!res.headersSent) res.writeHead(400).end();
      },
    );
  });
  server.listen(opts.port, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${opts.path ?? '/'}`,
    server,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers a request that is not a delivery to this listener, and says so. */
function refused(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  port: number,
  opts: ListenerOptions,
): boolean {
  const answer = (status: number, text: string, headers = {}) => {
    res.writeHead(status, { ...headers, 'content-type': 'text/plain' }).end(text);
    return true;
  };
  const host = req.headers.host ?? '';
  if (!hostAllowed(host, port, opts.allowHosts ?? [])) {
    opts.onRefusedHost?.(host);
    const name = host.replace(/:\d+$/, '') || 'NAME';
    return answer(
      421,
      `this listener accepts deliveries addressed to 127.0.0.1:${port} or localhost:${port}; for a tunnel's host name, start it with: imaging webhook listen --allow-host ${name}\n`,
    );
  }
  if (opts.path !== undefined && path !== opts.path)
    return answer(404, `not found: this listener receives on ${opts.path}\n`);
  if (req.method !== 'POST') return answer(405, 'webhook deliveries are POST requests\n', { allow: 'POST' });
  return false;
}

async function receive(
  opts: ListenerOptions,
  req: IncomingMessage,
  path: string,
  body: Buffer,
  seen: Set<string>,
  counts: Record<'received' | 'valid' | 'unsigned' | 'invalid' | 'duplicates', number>,
): Promise<{ status: number; reply: unknown }> {
  const headers = pairs(req.rawHeaders);
  const verdict = verifyDelivery({
    headers,
    body,
    secret: opts.secret,
    encoding: opts.encoding,
    tolerance: opts.tolerance,
    now: Math.floor(opts.now() / 1000),
    names: opts.names,
    allowUnsigned: opts.allowUnsigned,
  });
  const key =
    verdict.summary.eventId ??
    (verdict.summary.id ? `${verdict.summary.id}:${verdict.summary.outcome ?? ''}` : undefined);
  const duplicate = verdict.valid && key !== undefined && seen.has(key);
  if (verdict.valid && key !== undefined) seen.add(key);
  counts.received++;
  // Accepted without a signature (--allow-unsigned) is counted apart: nothing proved who sent it.
  if (!verdict.valid) counts.invalid++;
  else if (verdict.signature === 'unsigned') counts.unsigned++;
  else counts.valid++;
  if (duplicate) counts.duplicates++;
  let status = verdict.valid ? 200 : 400;
  let forwarded: number | string | undefined;
  if (verdict.valid && opts.forwardTo) {
    const f = await forward(opts.forwardTo, headers, body, opts.forwardTimeoutMs ?? FORWARD_TIMEOUT_MS);
    forwarded = f.forwarded;
    status = f.status;
  }
  opts.onDelivery({
    receivedAt: new Date(opts.now()).toISOString(),
    path,
    verdict,
    duplicate,
    forwarded,
    status,
    request: { method: req.method ?? 'POST', target: req.url ?? '/', headers, body },
  });
  const reply = verdict.valid
    ? { ok: true, duplicate, ...(forwarded !== undefined ? { forwarded } : {}) }
    : { ok: false, error: verdict.headline, problems: verdict.problems, likely_causes: verdict.causes };
  return { status, reply };
}

/**
 * Whether a request's Host names this listener (127.0.0.1 or localhost with its port, or an
 * --allow-host name): a page rebound to 127.0.0.1 still carries its own name.
 */
function hostAllowed(host: string, port: number, allowed: readonly string[]): boolean {
  const h = host.toLowerCase();
  if (h === `127.0.0.1:${port}` || h === `localhost:${port}`) return true;
  const name = h.replace(/:\d+$/, '');
  return allowed.some((a) => {
    const want = a.toLowerCase();
    return /:\d+$/.test(want) ? want === h : want === name;
  });
}

function pairs(raw: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const FORWARD_TIMEOUT_MS = 10_000;

/**
 * Passes the delivery on, same bytes and headers but the per-connection ones: the target's status,
 * 502 when it cannot be reached, 504 when it has not answered within the deadline.
 */
async function forward(
  target: string,
  headers: Array<[string, string]>,
  body: Buffer,
  timeoutMs: number,
): Promise<{ forwarded: number | string; status: number }> {
  const url = new URL(target);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of headers) {
    if (HOP_BY_HOP.has(k.toLowerCase())) continue;
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  // Settled when the head arrives: a target that streams its body forever cannot hold the delivery.
  const r = await deliver(url, out, body, { timeoutMs, settleAtHead: true });
  if (r.status !== undefined) return { forwarded: r.status, status: r.status };
  if (r.timedOut) {
    const s = timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`;
    return { forwarded: `no answer from ${url.origin} within ${s}`, status: 504 };
  }
  const refused = r.failure?.code === 'ECONNREFUSED';
  return {
    forwarded: refused ? `connection refused by ${url.origin}` : String(r.failure?.message),
    status: 502,
  };
}
