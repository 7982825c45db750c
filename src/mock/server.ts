import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Icd10Code, LawFirm } from '../api/types.js';
import { rng, uuidFrom } from './random.js';
import { buildReferenceData, type ReferenceData } from './reference-data.js';

/**
 * `imaging mock`: a local emulator of the Partner Imaging Referral API v2 on 127.0.0.1, with a
 * synthetic data set, the spec's error envelope with X-Request-Id, Bearer checks and the sandbox
 * rules. Mock-only routes live under /__mock/ and are documented in the README.
 */

export interface MockOptions {
  port?: number;
  host?: string;
  seed?: number;
  referrals?: number;
  /** Successful requests per token before 429 sandbox_request_limit_reached. */
  allowance?: number | undefined;
  /** Delay added to every answer, in ms. */
  latencyMs?: number | undefined;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  requestId: string;
}

/** Tokens the emulator understands (documented in the README). */
export const MOCK_TOKENS = {
  valid: 'mock-token',
  expired: 'mock-expired',
  exhausted: 'mock-exhausted',
  disabled: 'mock-disabled',
} as const;

export const DEFAULT_PER_PAGE = 25;
export const MAX_PER_PAGE = 100;

export interface MockServer {
  url: string;
  port: number;
  server: Server;
  data: ReferenceData;
  requests: RequestLogEntry[];
  close(): Promise<void>;
}

interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  requestId: string;
  token: string;
  body: Buffer;
}

type Route = (c: Ctx) => Promise<Reply> | Reply;
interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  raw?: string | Buffer;
}

class HttpReply extends Error {
  constructor(readonly reply: Reply) {
    super('reply');
  }
}

const DOCS = 'https://developers.example.invalid/partner-imaging/errors';

function envelope(
  status: number,
  type: string,
  code: string,
  message: string,
  requestId: string,
  errors?: string[],
): Reply {
  return {
    status,
    body: {
      error: message,
      message,
      type,
      code,
      request_id: requestId,
      documentation_url: `${DOCS}#${code}`,
      ...(errors ? { errors } : {}),
    },
  };
}

export async function startMockServer(options: MockOptions = {}): Promise<MockServer> {
  const seed = options.seed ?? 1;
  const data = buildReferenceData(seed);
  const requests: RequestLogEntry[] = [];
  const used = new Map<string, number>();
  const ssoTokens = new Map<string, boolean>();
  const idRand = rng(seed + 7919);
  const lawFirms: LawFirm[] = [...data.lawFirms];

  const routes = new Map<string, Route>();
  const route = (method: string, path: string, fn: Route) => routes.set(`${method} ${path}`, fn);

  route('GET', '/api/v2/modalities', () => ({ status: 200, body: data.modalities }));

  route('GET', '/api/v2/body_parts', (c) => {
    const modality = c.url.searchParams.get('modality');
    if (!modality) return { status: 200, body: data.bodyParts };
    const m = data.modalities.find(
      (x) =>
        x.id === modality ||
        x.name.toLowerCase() === modality.toLowerCase() ||
        x.slug === modality.toLowerCase(),
    );
    if (!m) return { status: 200, body: [] };
    return {
      status: 200,
      body: data.bodyParts.filter((b) => data.bodyPartModalities.get(b.name)?.includes(m.name)),
    };
  });

  route('GET', '/api/v2/cpt_codes', (c) => {
    const code = c.url.searchParams.get('code');
    if (!code) return { status: 400, body: { error: 'param is missing or the value is empty: code' } };
    return { status: 200, body: data.cpt.filter((m) => m.code === code.trim().toUpperCase()) };
  });

  route('GET', '/api/v2/icd10_codes', (c) => {
    const q = (c.url.searchParams.get('q') ?? '').trim().toLowerCase();
    const ids = [...c.url.searchParams.getAll('ids[]'), ...c.url.searchParams.getAll('ids')];
    const wanted = data.icd10.filter((x) => ids.includes(x.id));
    const matches = data.icd10.filter(
      (x) =>
        !ids.includes(x.id) &&
        (q === '' || x.code.toLowerCase().includes(q) || x.short_description.toLowerCase().includes(q)),
    );
    return { status: 200, body: paginated<Icd10Code>('icd10_codes', [...wanted, ...matches], c.url) };
  });

  route('GET', '/api/v2/law_firms', (c) => {
    gate(c, 'law firm search');
    const q = c.url.searchParams.get('q');
    if (q === null || q.trim() === '') {
      return envelope(422, 'validation_error', 'unprocessable_entity', 'q is required', c.requestId, [
        "q can't be blank",
      ]);
    }
    const needle = q.trim().toLowerCase();
    const hits = lawFirms.filter((f) =>
      [f.name, f.city, f.state, f.zipcode].some((v) => v.toLowerCase().includes(needle)),
    );
    return { status: 200, body: paginated('law_firms', hits, c.url) };
  });

  route('POST', '/api/v2/law_firms', (c) => {
    gate(c, 'law firm creation');
    const body = jsonBody(c);
    const firm = (body as { law_firm?: unknown } | undefined)?.law_firm;
    if (typeof firm !== 'object' || firm === null) {
      return envelope(422, 'validation_error', 'unprocessable_entity', 'law_firm is required', c.requestId, [
        "law_firm can't be blank",
      ]);
    }
    const f = firm as Record<string, unknown>;
    const errors: string[] = [];
    const text = (k: string) => (typeof f[k] === 'string' ? (f[k] as string).trim() : '');
    if (!text('name')) errors.push("Name can't be blank");
    if (!text('city')) errors.push("City can't be blank");
    if (!text('state')) errors.push("State can't be blank");
    else if (!/^[A-Za-z]{2}$/.test(text('state'))) errors.push('State must be a two-letter abbreviation');
    if (text('zipcode') && !/^\d{5}(-\d{4})?$/.test(text('zipcode'))) errors.push('Zipcode is invalid');
    if (
      lawFirms.some(
        (x) =>
          x.name.toLowerCase() === text('name').toLowerCase() &&
          x.city.toLowerCase() === text('city').toLowerCase(),
      )
    ) {
      errors.push('Name has already been taken in this city');
    }
    if (errors.length > 0) {
      return envelope(
        422,
        'validation_error',
        'unprocessable_entity',
        'Validation failed',
        c.requestId,
        errors,
      );
    }
    const created: LawFirm = {
      id: uuidFrom(idRand),
      name: text('name'),
      address_line_1: text('address_line_1'),
      address_line_2: text('address_line_2') || null,
      city: text('city'),
      state: text('state').toUpperCase(),
      zipcode: text('zipcode'),
    };
    lawFirms.push(created);
    return { status: 201, body: { law_firm: created } };
  });

  let server: Server;
  const baseUrl = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  route('POST', '/api/v2/auth/sso', () => {
    const token = randomBytes(24).toString('base64url');
    ssoTokens.set(token, true);
    return { status: 200, body: { url: `${baseUrl()}/portal/sso/${token}` } };
  });

  // Mock-only: the request log (method, path, status), so tests can count what was sent.
  const mockRoutes = new Map<string, Route>();
  mockRoutes.set('GET /__mock/requests', () => ({ status: 200, body: requests }));
  mockRoutes.set('DELETE /__mock/requests', () => {
    requests.length = 0;
    return { status: 204 };
  });
  mockRoutes.set('GET /__mock/health', () => ({ status: 200, body: { ok: true } }));

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const requestId = `req_${randomBytes(8).toString('hex')}`;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const body = await readBody(req);
    let reply: Reply;
    const c: Ctx = { req, res, url, requestId, token: '', body };
    const key = `${method} ${url.pathname.replace(/\/+$/, '') || '/'}`;
    try {
      const portal = /^\/portal\/sso\/([A-Za-z0-9_-]+)$/.exec(url.pathname);
      if (mockRoutes.has(key)) {
        reply = await mockRoutes.get(key)!(c);
      } else if (portal && method === 'GET') {
        const ok = ssoTokens.get(portal[1]!);
        ssoTokens.delete(portal[1]!);
        reply = ok
          ? {
              status: 200,
              raw: '<!doctype html><title>Partner portal (emulator)</title><h1>Signed in to the partner portal (emulator)</h1>',
              headers: { 'content-type': 'text/html' },
            }
          : {
              status: 410,
              raw: '<!doctype html><title>Link expired</title><h1>This sign-in link was already used or has expired.</h1>',
              headers: { 'content-type': 'text/html' },
            };
      } else {
        reply = await dispatch(c, method, key);
      }
    } catch (err) {
      if (err instanceof HttpReply) reply = err.reply;
      else reply = envelope(500, 'api_error', 'internal_error', 'Internal server error', requestId);
    }
    if (url.pathname.startsWith('/api/'))
      requests.push({ method, path: url.pathname + url.search, status: reply.status, requestId });
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    const headers: Record<string, string> = { 'x-request-id': requestId, ...reply.headers };
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
  };

  const dispatch = async (c: Ctx, method: string, key: string): Promise<Reply> => {
    if (!c.url.pathname.startsWith('/api/v2/')) {
      return envelope(
        404,
        'not_found_error',
        'not_found',
        `No route matches ${method} ${c.url.pathname}`,
        c.requestId,
      );
    }
    authenticate(c);
    const fn = routes.get(key);
    const reply = fn
      ? await fn(c)
      : envelope(
          404,
          'not_found_error',
          'not_found',
          `No route matches ${method} ${c.url.pathname}`,
          c.requestId,
        );
    // Only successful answers count against the sandbox allowance (spec: Limits).
    if (reply.status < 400) used.set(c.token, (used.get(c.token) ?? 0) + 1);
    return reply;
  };

  const authenticate = (c: Ctx) => {
    const auth = c.req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!m)
      throw new HttpReply(
        envelope(401, 'authentication_error', 'unauthorized', 'Missing or invalid API token', c.requestId),
      );
    const token = m[1]!;
    c.token = token;
    if (token === MOCK_TOKENS.expired) {
      throw new HttpReply(
        envelope(
          401,
          'authentication_error',
          'api_token_expired',
          'Sandbox API token has expired',
          c.requestId,
        ),
      );
    }
    if (!token.startsWith('mock-')) {
      throw new HttpReply(
        envelope(401, 'authentication_error', 'unauthorized', 'Missing or invalid API token', c.requestId),
      );
    }
    const exhausted =
      token === MOCK_TOKENS.exhausted ||
      (options.allowance !== undefined && (used.get(token) ?? 0) >= options.allowance);
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
  };

  const gate = (c: Ctx, what: string) => {
    if (c.token === MOCK_TOKENS.disabled) {
      throw new HttpReply(
        envelope(
          403,
          'permission_error',
          'endpoint_not_enabled',
          `The ${what} endpoint is not enabled for this account`,
          c.requestId,
        ),
      );
    }
  };

  server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    data,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

function jsonBody(c: Ctx): unknown {
  if (c.body.length === 0) return undefined;
  try {
    return JSON.parse(c.body.toString('utf8'));
  } catch {
    throw new HttpReply({ status: 400, body: { error: 'Request body is not valid JSON' } });
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** `{ <key>: [...], meta }` with the spec's pagination meta. */
export function paginated<T>(key: string, all: T[], url: URL): Record<string, unknown> {
  const page = clampInt(url.searchParams.get('page'), 1, 1, Number.MAX_SAFE_INTEGER);
  const perPage = clampInt(url.searchParams.get('per_page'), DEFAULT_PER_PAGE, 1, MAX_PER_PAGE);
  const totalPages = Math.max(1, Math.ceil(all.length / perPage));
  const items = all.slice((page - 1) * perPage, page * perPage);
  return {
    [key]: items,
    meta: {
      current_page: page,
      next_page: page < totalPages ? page + 1 : null,
      prev_page: page > 1 ? page - 1 : null,
      total_pages: totalPages,
      total_count: all.length,
    },
  };
}

function clampInt(value: string | null, fallback: number, min: number, max: number): number {
  if (value === null || !/^\d+$/.test(value)) return fallback;
  return Math.min(max, Math.max(min, Number(value)));
}
