import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { sleep } from '../util/timer.js';
import { DocumentLinks } from './data/documents.js';
import { rng } from './data/random.js';
import { buildReferenceData } from './data/reference-data.js';
import { ReferralStore } from './data/referral-data.js';
import { type FaultMode, FaultPlan, PROXY_502_PAGE, parseFault } from './faults.js';
import { envelope, HttpReply, internalError, noRoute } from './reply.js';
import { router } from './router.js';
import { ROUTES } from './routes/index.js';
import { startStorage } from './storage.js';
import { MOCK_TOKEN_PREFIX, MOCK_TOKENS } from './tokens.js';
import type { Ctx, EmulatorState, MockOptions, Reply, RequestLogEntry } from './types.js';
import { WebhookSender } from './webhooks.js';

/** `imaging mock`: the one pipeline every request takes (log, faults, Bearer, allowance, latency, hostile). */

export { FaultSpecError } from './faults.js';
export { paginated } from './pagination.js';
export { MOCK_TOKENS } from './tokens.js';
export type { MockOptions, RequestLogEntry } from './types.js';

export type MockServer = Awaited<ReturnType<typeof startMockServer>>;

const API = '/api/v2/';
const match = router(ROUTES);

export async function startMockServer(options: MockOptions = {}) {
  const seed = options.seed ?? 1;
  const data = buildReferenceData(seed);
  const faults = new FaultPlan();
  for (const spec of options.faults ?? []) faults.add(parseFault(spec));
  const state: EmulatorState = {
    options,
    data,
    lawFirms: [...data.lawFirms],
    referrals: new ReferralStore(seed, options.referrals ?? 300, data),
    idRand: rng(seed + 7919),
    ssoTokens: new Map(),
    webhooks: new WebhookSender({
      url: options.webhookUrl,
      key: options.webhookKey,
      encoding: options.webhookEncoding ?? 'hex',
      retryDelayMs: options.webhookRetryDelayMs ?? 1000,
      maxAttempts: options.webhookMaxAttempts ?? 5,
    }),
    faults,
    requests: [],
    used: new Map(),
    port: 0,
  };
  const server = createServer((req, res) => {
    handle(state, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.keepAliveTimeout = 5000;
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { referrals, webhooks, requests } = state;
  state.port = (server.address() as AddressInfo).port;
  // The second origin, where some referrals' reports are served by signed links.
  const storage = await startStorage(referrals, options.storagePort ?? 0, options.host ?? '127.0.0.1');
  referrals.links = new DocumentLinks(`http://127.0.0.1:${state.port}`, storage.url);
  const stopAdvancing = options.advanceEveryMs
    ? (await import('./advance.js')).startAdvancing(state, options.advanceEveryMs)
    : undefined;
  return {
    url: `http://127.0.0.1:${state.port}`,
    port: state.port,
    server,
    data,
    referrals,
    webhooks,
    faults,
    requests,
    storage,
    close: () =>
      new Promise<void>((resolve) => {
        stopAdvancing?.();
        webhooks.stop();
        referrals.forget();
        void storage.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(s: EmulatorState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = `req_${randomBytes(8).toString('hex')}`;
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const method = (req.method ?? 'GET').toUpperCase();
  const body = await buffer(req);
  const c: Ctx = { req, res, url, requestId, token: '', body, params: {} };
  // Logged on arrival, so a slow answer is counted when it was asked.
  const entry: RequestLogEntry = { method, path: url.pathname + url.search, status: 0, requestId };
  if (url.pathname.startsWith('/api/')) s.requests.push(entry);
  let reply: Reply | undefined;
  try {
    reply = await answer(s, c, method);
  } catch (err) {
    reply = err instanceof HttpReply ? err.reply : internalError(requestId);
  }
  if (reply === undefined) return;
  entry.status = reply.status;
  if (s.options.latencyMs) await sleep(s.options.latencyMs);
  const headers: Record<string, string> = { 'x-request-id': requestId, ...reply.headers };
  if (s.options.hostile) {
    const { writeHostile } = await import('./hostile.js');
    writeHostile(res.socket!, reply, headers);
  } else if (reply.raw === undefined && reply.body !== undefined) {
    const text = JSON.stringify(reply.body);
    const json = {
      'content-type': 'application/json; charset=utf-8',
      'content-length': `${Buffer.byteLength(text)}`,
    };
    res.writeHead(reply.status, { ...json, ...headers }).end(text);
  } else {
    res.writeHead(reply.status, headers).end(reply.raw);
  }
}

/** The reply, or undefined when the connection was reset instead. */
async function answer(s: EmulatorState, c: Ctx, method: string): Promise<Reply | undefined> {
  const { url, req } = c;
  const foreignHost = hostRefusal(s, req);
  if (foreignHost) return foreignHost;
  if (!url.pathname.startsWith(API)) {
    const refused = url.pathname.startsWith('/__mock/') ? adminRefusal(req, method) : undefined;
    return refused ?? dispatch(s, c, method);
  }
  // Faults come before the Bearer check and apply to every /api/v2 path, routed or not.
  const fault = s.faults.next(url.pathname);
  if (fault === 'reset') {
    req.socket.destroy();
    return undefined;
  }
  if (fault === 'slow') await sleep(s.options.faultDelayMs ?? 15_000);
  if (fault && fault !== 'slow' && fault !== 'truncated') return faultReply(fault, c.requestId);
  authenticate(s, c);
  const reply = await dispatch(s, c, method);
  if (reply.status < 400) s.used.set(c.token, (s.used.get(c.token) ?? 0) + 1);
  return fault === 'truncated' && reply.status < 300 ? truncated(reply) : reply;
}

function dispatch(s: EmulatorState, c: Ctx, method: string): Promise<Reply> | Reply {
  const found = match(method, c.url.pathname);
  if (!found) return noRoute(method, c);
  c.params = found.params;
  return found.route.handler(c, s);
}

function authenticate(s: EmulatorState, c: Ctx): void {
  const token = /^Bearer\s+(\S+)\s*$/i.exec(c.req.headers.authorization ?? '')?.[1] ?? '';
  c.token = token;
  if (token === MOCK_TOKENS.expired) throw new HttpReply(faultReply('401', c.requestId));
  if (!token.startsWith(MOCK_TOKEN_PREFIX))
    throw new HttpReply(envelope(401, 'unauthorized', 'Missing or invalid API token', c.requestId));
  const { allowance } = s.options;
  if (token === MOCK_TOKENS.exhausted || (allowance !== undefined && (s.used.get(token) ?? 0) >= allowance)) {
    const message = 'Sandbox request limit reached';
    throw new HttpReply(envelope(429, 'sandbox_request_limit_reached', message, c.requestId));
  }
}

/**
 * Every route answers only requests addressed to this emulator: a DNS-rebinding page reaches it
 * with its own name in Host, and could otherwise drive /api/v2 (auto_book, sandbox) and /__mock/.
 */
function hostRefusal(s: EmulatorState, req: IncomingMessage): Reply | undefined {
  const hosts = ['127.0.0.1', 'localhost', '[::1]', ...(s.options.host ? [s.options.host] : [])];
  const own = hosts.map((h) =>
    `${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${s.port}`.toLowerCase(),
  );
  if (own.includes((req.headers.host ?? '').toLowerCase())) return undefined;
  const error = `the emulator answers only requests addressed to ${own[0]} or ${own[1]}`;
  return { status: 421, body: { error } };
}

/**
 * Why a /__mock/ request is refused: only this machine's own tools may change the emulator, so a POST
 * must carry JSON (which another site cannot send without the preflight this server never answers).
 */
function adminRefusal(req: IncomingMessage, method: string): Reply | undefined {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (method === 'POST' && type !== 'application/json') {
    const error = 'the /__mock/ routes take POST requests with Content-Type: application/json only';
    return { status: 415, body: { error } };
  }
  return undefined;
}

/** The answer a fault mode stands for (`reset`, `slow` and `truncated` act on the real answer). */
function faultReply(fault: Exclude<FaultMode, 'reset' | 'slow' | 'truncated'>, requestId: string): Reply {
  switch (fault) {
    case '500':
      return internalError(requestId);
    case '502':
      return { status: 502, raw: PROXY_502_PAGE, headers: { 'content-type': 'text/html' } };
    case '429': {
      const reply = envelope(429, 'rate_limited', 'Too many requests; slow down', requestId);
      return { ...reply, headers: { 'retry-after': '1' } };
    }
    case '401':
      return envelope(401, 'api_token_expired', 'Sandbox API token has expired', requestId);
  }
}

function truncated(reply: Reply): Reply {
  const text = reply.raw !== undefined ? String(reply.raw) : JSON.stringify(reply.body);
  const raw = text.slice(0, Math.floor(text.length / 2));
  return { status: reply.status, raw, headers: { 'content-type': 'application/json' } };
}
