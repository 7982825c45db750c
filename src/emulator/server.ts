import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rng } from './data/random.js';
import { buildReferenceData, type ReferenceData } from './data/reference-data.js';
import { ReferralStore } from './data/referral-data.js';
import { type FaultMode, FaultPlan, PROXY_502_PAGE, parseFault } from './faults.js';
import { envelope, HttpReply, noRoute } from './reply.js';
import { Router } from './router.js';
import { ROUTES } from './routes/index.js';
import { MOCK_TOKEN_PREFIX, MOCK_TOKENS } from './tokens.js';
import type { Ctx, EmulatorState, MockOptions, Reply, RequestLogEntry } from './types.js';
import { WebhookSender } from './webhooks.js';

/** `imaging mock`: the one pipeline every request takes (log, faults, Bearer, allowance, latency, hostile). */

export { DEFAULT_PER_PAGE, MAX_PER_PAGE, paginated } from './pagination.js';
export { MOCK_TOKENS } from './tokens.js';
export type { MockOptions, RequestLogEntry } from './types.js';

export interface MockServer {
  url: string;
  port: number;
  server: Server;
  data: ReferenceData;
  referrals: ReferralStore;
  webhooks: WebhookSender;
  faults: FaultPlan;
  requests: RequestLogEntry[];
  close(): Promise<void>;
}

const API = '/api/v2/';

export async function startMockServer(options: MockOptions = {}): Promise<MockServer> {
  const seed = options.seed ?? 1;
  const data = buildReferenceData(seed);
  const faults = new FaultPlan();
  for (const spec of options.faults ?? []) faults.add(parseFault(spec));
  let port = 0;
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
    baseUrl: () => `http://127.0.0.1:${port}`,
  };
  const p: Pipeline = {
    options,
    state,
    router: new Router().add(...ROUTES),
    used: new Map(),
    port: () => port,
  };
  const http = createServer((req, res) => {
    handle(p, req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  http.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  const stopAdvancing = options.advanceEveryMs
    ? (await import('./advance.js')).startAdvancing(state, options.advanceEveryMs)
    : undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server: http,
    data,
    referrals: state.referrals,
    webhooks: state.webhooks,
    faults,
    requests: state.requests,
    close: () =>
      new Promise<void>((resolve) => {
        stopAdvancing?.();
        state.webhooks.stop();
        http.closeAllConnections?.();
        http.close(() => resolve());
      }),
  };
}

interface Pipeline {
  options: MockOptions;
  state: EmulatorState;
  router: Router;
  used: Map<string, number>;
  port: () => number;
}

async function handle(p: Pipeline, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = `req_${randomBytes(8).toString('hex')}`;
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const method = (req.method ?? 'GET').toUpperCase();
  const body = await readBody(req);
  const c: Ctx = { req, res, url, requestId, token: '', body, params: {} };
  // Logged on arrival, so a slow answer is counted when it was asked.
  const entry: RequestLogEntry = { method, path: url.pathname + url.search, status: 0, requestId };
  if (url.pathname.startsWith('/api/')) p.state.requests.push(entry);
  let reply: Reply;
  try {
    const answered = await answer(p, c, method);
    if (answered === undefined) return;
    reply = answered;
  } catch (err) {
    if (err instanceof HttpReply) reply = err.reply;
    else reply = envelope(500, 'api_error', 'internal_error', 'Internal server error', requestId);
  }
  entry.status = reply.status;
  if (p.options.latencyMs) await new Promise((r) => setTimeout(r, p.options.latencyMs));
  const headers: Record<string, string> = { 'x-request-id': requestId, ...reply.headers };
  if (p.options.hostile) {
    const { writeHostile } = await import('./hostile.js');
    writeHostile(res.socket!, reply, headers);
    return;
  }
  writeReply(res, reply, headers);
}

async function answer(p: Pipeline, c: Ctx, method: string): Promise<Reply | undefined> {
  const { url, req } = c;
  if (url.pathname.startsWith(API)) {
    // Faults come before the Bearer check and apply to every /api/v2 path, routed or not.
    const fault = p.state.faults.next(url.pathname);
    if (fault === 'reset') {
      req.socket.destroy();
      return undefined;
    }
    if (fault === 'slow') await new Promise((r) => setTimeout(r, p.options.faultDelayMs ?? 15_000));
    if (fault && fault !== 'slow' && fault !== 'truncated') return faultReply(fault, c.requestId);
    const reply = await api(p, c, method);
    return fault === 'truncated' && reply.status < 300 ? truncated(reply) : reply;
  }
  const refused = url.pathname.startsWith('/__mock/')
    ? adminRefusal(req, method, p.port(), p.options.host)
    : undefined;
  if (refused) return refused;
  const match = p.router.match(method, url.pathname);
  if (!match) return noRoute(method, c);
  c.params = match.params;
  return match.route.handler(c, p.state);
}

async function api(p: Pipeline, c: Ctx, method: string): Promise<Reply> {
  authenticate(p, c);
  const match = p.router.match(method, c.url.pathname);
  if (!match) return noRoute(method, c);
  c.params = match.params;
  const reply = await match.route.handler(c, p.state);
  if (reply.status < 400) p.used.set(c.token, (p.used.get(c.token) ?? 0) + 1);
  return reply;
}

function authenticate(p: Pipeline, c: Ctx): void {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(c.req.headers.authorization ?? '');
  const unauthorized = () =>
    new HttpReply(
      envelope(401, 'authentication_error', 'unauthorized', 'Missing or invalid API token', c.requestId),
    );
  if (!m) throw unauthorized();
  const token = m[1]!;
  c.token = token;
  if (token === MOCK_TOKENS.expired) throw new HttpReply(faultReply('401', c.requestId));
  if (!token.startsWith(MOCK_TOKEN_PREFIX)) throw unauthorized();
  const allowance = p.options.allowance;
  const exhausted =
    token === MOCK_TOKENS.exhausted || (allowance !== undefined && (p.used.get(token) ?? 0) >= allowance);
  if (exhausted) {
    throw new HttpReply(
      envelope(
        429,
        'rate_limit_error',
        'sandbox_request_limit_reached',
        'Sandbox request limit reached',
        c.requestId,
      ),
    );
  }
}

function writeReply(res: ServerResponse, reply: Reply, headers: Record<string, string>): void {
  if (reply.raw !== undefined) {
    res.writeHead(reply.status, headers);
    res.end(reply.raw);
  } else if (reply.body === undefined) {
    res.writeHead(reply.status, headers);
    res.end();
  } else {
    const text = JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }
}

/**
 * Why a /__mock/ request is refused: only this machine's own tools may change the emulator, so the
 * Host must name it (a rebound page sends its own) and a POST must carry JSON (which another site
 * cannot send without the preflight this server never answers).
 */
function adminRefusal(
  req: IncomingMessage,
  method: string,
  port: number,
  boundHost: string | undefined,
): Reply | undefined {
  const own = ['127.0.0.1', 'localhost', '[::1]', ...(boundHost ? [boundHost] : [])].map((h) =>
    `${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${port}`.toLowerCase(),
  );
  const host = (req.headers.host ?? '').toLowerCase();
  if (!own.includes(host)) {
    return {
      status: 421,
      body: { error: `the /__mock/ routes answer only requests addressed to ${own[0]} or ${own[1]}` },
    };
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (method === 'POST' && type !== 'application/json') {
    return {
      status: 415,
      body: { error: 'the /__mock/ routes take POST requests with Content-Type: application/json only' },
    };
  }
  return undefined;
}

/** The answer a fault mode stands for (`reset`, `slow` and `truncated` act on the real answer). */
function faultReply(fault: Exclude<FaultMode, 'reset' | 'slow' | 'truncated'>, requestId: string): Reply {
  switch (fault) {
    case '500':
      return envelope(500, 'api_error', 'internal_error', 'Internal server error', requestId);
    case '502':
      return { status: 502, raw: PROXY_502_PAGE, headers: { 'content-type': 'text/html' } };
    case '429':
      return {
        ...envelope(429, 'rate_limit_error', 'rate_limited', 'Too many requests; slow down', requestId),
        headers: { 'retry-after': '1' },
      };
    case '401':
      return envelope(
        401,
        'authentication_error',
        'api_token_expired',
        'Sandbox API token has expired',
        requestId,
      );
  }
}

function truncated(reply: Reply): Reply {
  const text = reply.raw !== undefined ? String(reply.raw) : JSON.stringify(reply.body);
  return {
    status: reply.status,
    raw: text.slice(0, Math.floor(text.length / 2)),
    headers: { 'content-type': 'application/json' },
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
