import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Icd10Code, LawFirm, Referral } from '../api/types.js';
import type { DigestEncoding } from '../webhook/sign.js';
import { FaultPlan, PROXY_502_PAGE, parseFault } from './faults.js';
import { rng, uuidFrom } from './random.js';
import { buildReferenceData, type ReferenceData } from './reference-data.js';
import { ReferralStore } from './referral-data.js';
import { newEventId, nextVisitStatus, WebhookSender } from './webhooks.js';

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
  /** Shape of GET /referrals (not published): `{ referrals, meta }` (default) or a bare array. */
  referralListShape?: 'object' | 'bare';
  /** Where events go (the group's api_credentials webhook_url), and how they are signed. */
  webhookUrl?: string | undefined;
  webhookKey?: Buffer | undefined;
  webhookEncoding?: DigestEncoding;
  webhookRetryDelayMs?: number;
  webhookMaxAttempts?: number;
  /** Faults to inject (MODE[:COUNT][@AFTER]); more can be added at run time with POST /__mock/faults. */
  faults?: string[];
  /** How long a `slow` fault holds its answer, in ms. */
  faultDelayMs?: number;
  /** Serve hostile strings in every string field, header and reason phrase (mock/hostile.ts). */
  hostile?: boolean;
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
  referrals: ReferralStore;
  webhooks: WebhookSender;
  faults: FaultPlan;
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
      return invalid(c, errors);
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

  const referrals = new ReferralStore(seed, options.referrals ?? 300, data);

  route('GET', '/api/v2/referrals', (c) => {
    const status = c.url.searchParams.get('status');
    const lob = c.url.searchParams.get('line_of_business');
    if (status || lob) {
      const all: Referral[] = [];
      for (let i = 0; i < referrals.total; i++) {
        const r = referrals.at(i);
        if ((!status || r.status === status) && (!lob || r.line_of_business === lob)) all.push(r);
      }
      return listReply(c, all.length, (a, b) => all.slice(a, b));
    }
    const { page, perPage, meta } = pageOf(c.url, referrals.total);
    const items = referrals.sliceJson((page - 1) * perPage, page * perPage).join(',');
    const raw =
      options.referralListShape === 'bare'
        ? `[${items}]`
        : `{"referrals":[${items}],"meta":${JSON.stringify(meta)}}`;
    return { status: 200, raw, headers: { 'content-type': 'application/json; charset=utf-8' } };
  });

  const listReply = (c: Ctx, total: number, slice: (a: number, b: number) => Referral[]): Reply => {
    const { page, perPage, meta } = pageOf(c.url, total);
    const items = slice((page - 1) * perPage, page * perPage);
    return { status: 200, body: options.referralListShape === 'bare' ? items : { referrals: items, meta } };
  };

  route('POST', '/api/v2/referrals', (c) => {
    const body = jsonBody(c);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return envelope(422, 'validation_error', 'unprocessable_entity', 'Validation failed', c.requestId, [
        'Body must be a JSON object',
      ]);
    }
    const b = body as Record<string, unknown>;
    const inner = (typeof b.referral === 'object' && b.referral !== null ? b.referral : b) as Record<
      string,
      unknown
    >;
    const errors: string[] = [];
    const patient = inner.patient as Record<string, unknown> | undefined;
    if (typeof patient !== 'object' || patient === null) errors.push("Patient can't be blank");
    else {
      if (typeof patient.first_name !== 'string' || patient.first_name.trim() === '')
        errors.push("Patient first name can't be blank");
      if (typeof patient.last_name !== 'string' || patient.last_name.trim() === '')
        errors.push("Patient last name can't be blank");
    }
    const lob = inner.line_of_business;
    if (lob !== undefined && !['personal_injury', 'workers_comp', 'health_plan'].includes(String(lob))) {
      errors.push(`Line of business ${String(lob)} cannot be selected on referral creation`);
    }
    if (errors.length > 0) return invalid(c, errors);
    const template = referrals.at(0);
    const p = patient as Record<string, unknown>;
    const created: Referral = {
      ...structuredClone(template),
      id: uuidFrom(idRand),
      reference: `R-${String(900000 + referrals.total).padStart(6, '0')}`,
      status: 'pending',
      line_of_business: (lob as string | undefined) ?? 'personal_injury',
      visits: [],
      call_notes: [],
      auto_book_request: null,
      patient: {
        ...template.patient,
        id: uuidFrom(idRand),
        first_name: String(p.first_name),
        last_name: String(p.last_name),
        name: `${String(p.first_name)} ${String(p.last_name)}`,
      },
    };
    referrals.add(created);
    return { status: 201, body: created };
  });

  // The spec names these without shapes; the emulator answers with plausible ones so that
  // `imaging api` can be tried end to end. Their paths and bodies are the emulator's guesses.
  route('POST', '/api/v2/patients', (c) => {
    const body = jsonBody(c);
    const p = (
      typeof body === 'object' && body !== null ? ((body as Record<string, unknown>).patient ?? body) : {}
    ) as Record<string, unknown>;
    const errors: string[] = [];
    if (typeof p.first_name !== 'string' || p.first_name.trim() === '')
      errors.push("First name can't be blank");
    if (typeof p.last_name !== 'string' || p.last_name.trim() === '') errors.push("Last name can't be blank");
    if (errors.length > 0) return invalid(c, errors);
    return {
      status: 201,
      body: {
        id: uuidFrom(idRand),
        first_name: p.first_name,
        middle_initial: p.middle_initial ?? null,
        last_name: p.last_name,
        email: p.email ?? null,
        phone_number: p.phone_number ?? '',
        date_of_birth: null,
        date_of_birth_iso: p.date_of_birth_iso ?? null,
        identifier: { system: 'urn:partner-imaging:patient-id', value: uuidFrom(idRand) },
        address_line_1: null,
        address_line_2: null,
        city: null,
        state: null,
        zip_code: null,
        gender: p.gender ?? null,
        weight: null,
        height_feet: null,
        height_inches: null,
      },
    };
  });

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
  mockRoutes.set('GET /__mock/deliveries', () => ({ status: 200, body: webhooks.log }));
  const faults = new FaultPlan();
  for (const spec of options.faults ?? []) faults.add(parseFault(spec));
  mockRoutes.set('GET /__mock/faults', () => ({ status: 200, body: faults.describe() }));
  mockRoutes.set('DELETE /__mock/faults', () => {
    faults.clear();
    return { status: 204 };
  });
  mockRoutes.set('POST /__mock/faults', (c) => {
    const input = (jsonBody(c) ?? {}) as { fault?: unknown; path?: unknown };
    try {
      const f = parseFault(
        String(input.fault ?? ''),
        typeof input.path === 'string' ? input.path : undefined,
      );
      faults.add(f);
      return { status: 201, body: faults.describe() };
    } catch (err) {
      return { status: 422, body: { error: (err as Error).message } };
    }
  });

  const webhooks = new WebhookSender({
    url: options.webhookUrl,
    key: options.webhookKey,
    encoding: options.webhookEncoding ?? 'hex',
    retryDelayMs: options.webhookRetryDelayMs ?? 1000,
    maxAttempts: options.webhookMaxAttempts ?? 5,
  });

  /** Mock-only event triggers: POST /__mock/referrals/{id}/visits/{visit_id}/advance, …/notifications, …/auto_book. */
  const trigger = (c: Ctx, method: string): Reply | undefined => {
    const m =
      /^\/__mock\/referrals\/([^/]+)\/(?:visits\/([^/]+)\/(advance)|(notifications)|(auto_book))$/.exec(
        c.url.pathname,
      );
    if (!m || method !== 'POST') return undefined;
    const referral = referrals.get(decodeURIComponent(m[1]!));
    if (!referral) return envelope(404, 'not_found_error', 'not_found', 'Referral not found', c.requestId);
    const input = (jsonBody(c) ?? {}) as Record<string, unknown>;
    const perRequest = typeof input.webhook_url === 'string' ? input.webhook_url : undefined;
    if (!webhooks.configured && !(m[5] && perRequest)) {
      return { status: 409, body: { error: 'no webhook URL: start the emulator with --webhook-url URL' } };
    }
    const now = new Date().toISOString();
    if (m[3]) {
      const updated = structuredClone(referral);
      const visit = updated.visits.find((v) => v.id === decodeURIComponent(m[2]!));
      if (!visit) return envelope(404, 'not_found_error', 'not_found', 'Visit not found', c.requestId);
      const previous = visit.status;
      visit.status = typeof input.status === 'string' ? input.status : nextVisitStatus(previous);
      referrals.put(updated);
      const sent = webhooks.send({
        event_id: newEventId(),
        event_name: 'visit.status_changed',
        status: visit.status,
        changes: { status: [previous, visit.status] },
        visit_id: visit.id,
        occurred_at: now,
        referral: updated,
      });
      return { status: 202, body: { ...sent, status: [previous, visit.status] } };
    }
    if (m[4]) {
      const channel = input.channel === 'email' ? 'email' : 'sms';
      const status = typeof input.status === 'string' ? input.status : 'delivered';
      const previous =
        typeof input.previous === 'string' ? input.previous : input.previous === null ? null : 'dispatched';
      const sent = webhooks.send({
        event_id: newEventId(),
        event_name: 'notification.status_changed',
        referral_id: referral.id,
        status,
        changes: { status: [previous, status] },
        notification: {
          id: newEventId(),
          channel,
          notification_type: 'appointment_reminder',
          status,
          created_at: now,
          updated_at: now,
          visit_id: referral.visits[0]?.id ?? null,
        },
        occurred_at: now,
      });
      return { status: 202, body: sent };
    }
    const updated = structuredClone(referral);
    updated.auto_book_request = {
      id: newEventId(),
      status: 'completed',
      strategy: 'closest_soonest',
      radius: 25,
      address: null,
      outcome: typeof input.outcome === 'string' ? input.outcome : 'booked',
      error: null,
      completed_at: now,
    };
    referrals.put(updated);
    const sent = webhooks.send(
      {
        event_name: 'referral.auto_book_completed',
        occurred_at: now,
        auto_book_request: updated.auto_book_request,
        referral: updated,
      },
      perRequest,
    );
    return { status: 202, body: sent };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const requestId = `req_${randomBytes(8).toString('hex')}`;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const body = await readBody(req);
    let reply: Reply;
    const c: Ctx = { req, res, url, requestId, token: '', body };
    const key = `${method} ${url.pathname.replace(/\/+$/, '') || '/'}`;
    // Logged on arrival (status filled in on answer), so a slow answer is counted when it was asked.
    const entry: RequestLogEntry = { method, path: url.pathname + url.search, status: 0, requestId };
    if (url.pathname.startsWith('/api/')) requests.push(entry);
    try {
      const portal = /^\/portal\/sso\/([A-Za-z0-9_-]+)$/.exec(url.pathname);
      const triggered = url.pathname.startsWith('/__mock/referrals/') ? trigger(c, method) : undefined;
      if (triggered) {
        reply = triggered;
      } else if (mockRoutes.has(key)) {
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
        const fault = url.pathname.startsWith('/api/v2/') ? faults.next(url.pathname) : undefined;
        if (fault === 'reset') {
          req.socket.destroy();
          return;
        }
        if (fault === 'slow') await new Promise((r) => setTimeout(r, options.faultDelayMs ?? 15_000));
        if (fault === '500')
          reply = envelope(500, 'api_error', 'internal_error', 'Internal server error', requestId);
        else if (fault === '502')
          reply = { status: 502, raw: PROXY_502_PAGE, headers: { 'content-type': 'text/html' } };
        else if (fault === '429') {
          reply = envelope(
            429,
            'rate_limit_error',
            'rate_limited',
            'Too many requests; slow down',
            requestId,
          );
          reply.headers = { 'retry-after': '1' };
        } else if (fault === '401') {
          reply = envelope(
            401,
            'authentication_error',
            'api_token_expired',
            'Sandbox API token has expired',
            requestId,
          );
        } else {
          reply = await dispatch(c, method, key);
          if (fault === 'truncated' && reply.status < 300) {
            const text = reply.raw !== undefined ? String(reply.raw) : JSON.stringify(reply.body);
            reply = {
              status: reply.status,
              raw: text.slice(0, Math.floor(text.length / 2)),
              headers: { 'content-type': 'application/json' },
            };
          }
        }
      }
    } catch (err) {
      if (err instanceof HttpReply) reply = err.reply;
      else reply = envelope(500, 'api_error', 'internal_error', 'Internal server error', requestId);
    }
    entry.status = reply.status;
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    const headers: Record<string, string> = { 'x-request-id': requestId, ...reply.headers };
    if (options.hostile) {
      const { hostileBody, writeRawAnswer } = await import('./hostile.js');
      // JSON written as raw text (the referral list) is made hostile too; HTML pages are not.
      let json = reply.raw !== undefined && /json/.test(headers['content-type'] ?? '');
      let body = reply.body;
      try {
        if (json) body = JSON.parse(String(reply.raw));
      } catch {
        json = false; // a truncated-body fault: sent as it is
      }
      const bytes =
        reply.raw !== undefined && !json
          ? Buffer.from(reply.raw)
          : body === undefined
            ? Buffer.alloc(0)
            : Buffer.from(JSON.stringify(hostileBody(body)));
      if (body !== undefined) headers['content-type'] ??= 'application/json; charset=utf-8';
      writeRawAnswer(res.socket!, reply.status, headers, bytes);
      return;
    }
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
    const one = /^\/api\/v2\/referrals\/([^/]+)(\/payments|\/notifications)?$/.exec(c.url.pathname);
    if (one && method === 'GET') {
      const r = referrals.get(decodeURIComponent(one[1]!));
      let reply: Reply;
      if (!r) reply = envelope(404, 'not_found_error', 'not_found', 'Referral not found', c.requestId);
      else if (one[2]) {
        gate(c, one[2] === '/payments' ? 'payment read' : 'notification read');
        reply = { status: 200, body: one[2] === '/payments' ? mockPayments(r) : mockNotifications(r) };
      } else reply = { status: 200, body: r };
      if (reply.status < 400) used.set(c.token, (used.get(c.token) ?? 0) + 1);
      return reply;
    }
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
    referrals,
    webhooks,
    faults,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        webhooks.stop();
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** 422 in the spec's envelope, listing what failed. */
function invalid(c: Ctx, errors: string[]): Reply {
  return envelope(422, 'validation_error', 'unprocessable_entity', 'Validation failed', c.requestId, errors);
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
  const { page, perPage, meta } = pageOf(url, all.length);
  return { [key]: all.slice((page - 1) * perPage, page * perPage), meta };
}

function pageOf(url: URL, total: number) {
  const page = clampInt(url.searchParams.get('page'), 1, 1, Number.MAX_SAFE_INTEGER);
  const perPage = clampInt(url.searchParams.get('per_page'), DEFAULT_PER_PAGE, 1, MAX_PER_PAGE);
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  return {
    page,
    perPage,
    meta: {
      current_page: page,
      next_page: page < totalPages ? page + 1 : null,
      prev_page: page > 1 ? page - 1 : null,
      total_pages: totalPages,
      total_count: total,
    },
  };
}

function clampInt(value: string | null, fallback: number, min: number, max: number): number {
  if (value === null || !/^\d+$/.test(value)) return fallback;
  return Math.min(max, Math.max(min, Number(value)));
}

function mockPayments(r: Referral): Record<string, unknown> {
  const procs = r.visits.flatMap((v) => v.procedures);
  return {
    payments: procs.slice(0, 1).map((p, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      amount: 450.5,
      date: '2026-03-01',
      check_number: 'CHK-1001',
      procedures: [
        { order_id: r.id, accession_id: p.accession_id, cpt_code: p.cpt_code, description: p.procedure },
      ],
    })),
  };
}

function mockNotifications(r: Referral): Record<string, unknown> {
  return {
    notifications: [
      {
        id: `00000000-0000-4000-9000-${r.id.slice(-12)}`,
        channel: 'sms',
        notification_type: 'appointment_reminder',
        status: 'delivered',
        created_at: '2026-01-05T14:00:00.000Z',
        updated_at: '2026-01-05T14:00:05.000Z',
        visit_id: r.visits[0]?.id ?? null,
      },
    ],
  };
}
