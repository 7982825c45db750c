import type { IncomingHttpHeaders } from 'node:http';
import {
  ApiError,
  type ApiErrorDetails,
  CliError,
  ExitCode,
  NetworkError,
  NotJsonError,
  TimeoutError,
  UnreadableAnswerError,
  UsageError,
} from '../errors.js';
import { userAgent } from '../version.js';
import { type Clean, parseErrorBody, parseRetryAfter } from './errors.js';
import {
  type Decision,
  decide,
  type Outcome,
  RETRY_POLICY,
  type RetryPolicy,
  retries,
  sleep,
} from './retry.js';
import { cacheHitLine, redactToken, retryLine, shownRequestId, type Trace, traceUrl } from './trace.js';
import { abortError, Body, checkLinkTarget, headerValue, type RawResponse, Transport } from './transport.js';
import { apiScope, apiUrl, isLoopbackHost, outsideScope, type Query } from './url.js';

/** What a command talks to: URL join, auth, the JSON answer, the error envelope -> ApiError. */

interface ApiClientOptions {
  baseUrl: string;
  token?: string | undefined;
  timeoutMs: number;
  /** Server text kept in an error passes through this: the one sanitiser (output/text.ts clean). */
  clean: Clean;
  trace?: Trace;
  /** Tries in all for a retryable GET (1 disables retries). */
  maxAttempts?: number;
  baseDelayMs?: number;
  maxRetryAfterMs?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  signal?: AbortSignal | undefined;
  env?: NodeJS.ProcessEnv;
  maxBodyBytes?: number;
  maxSockets?: number;
  /** Told every answer's status and error code (the sandbox meter); its text joins the error block. */
  onAnswer?: ((status: number, code: string | undefined) => string | undefined) | undefined;
}

export interface ApiRequest {
  method?: string;
  path: string;
  query?: Query | undefined;
  json?: unknown;
  /** Sent as given (already JSON). */
  body?: string | Buffer | undefined;
  headers?: Record<string, string>;
  /** Defaults to true for the policy's methods (GET, HEAD), and is never honoured for others. */
  retry?: boolean;
  /** No Authorization header (tests only). */
  anonymous?: boolean;
  /** Never from or into the reference cache: a query a person typed (a search) stays off the disk. */
  uncached?: boolean;
  signal?: AbortSignal | undefined;
  /** Leave a 2xx body unparsed (`data` undefined): `imaging api` on non-JSON, pages held as bytes. */
  raw?: boolean;
}

/** Earlier answers of some GET requests, kept on disk; a hit is answered without sending. */
export interface AnswerCache {
  lookup(
    path: string,
    url: string,
  ): { bytes: Buffer; headers: IncomingHttpHeaders; ageMs: number } | undefined;
  stage(path: string, url: string, res: ApiResponse<unknown>): void;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: IncomingHttpHeaders;
  data: T;
  readonly raw: Buffer;
  body: Body;
  url: string;
  requestId: string | undefined;
  attempts: number;
}

interface Prepared {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  retry: boolean;
}

export class ApiClient {
  readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly trace: Trace;
  private readonly policy: RetryPolicy;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly transport: Transport;
  private readonly onAnswer: ApiClientOptions['onAnswer'];
  private readonly clean: Clean;
  cache: AnswerCache | undefined;

  constructor(options: ApiClientOptions) {
    this.baseUrl = options.baseUrl;
    this.onAnswer = options.onAnswer;
    this.clean = options.clean;
    this.token = options.token;
    // A server may echo the token (a reason phrase, a request id): never shown as it came.
    const trace = options.trace;
    this.trace = trace && ((line) => trace(redactToken(line, this.token)));
    this.policy = {
      ...RETRY_POLICY,
      attempts: Math.max(1, options.maxAttempts ?? RETRY_POLICY.attempts),
      baseDelayMs: options.baseDelayMs ?? RETRY_POLICY.baseDelayMs,
      maxRetryAfterMs: options.maxRetryAfterMs ?? RETRY_POLICY.maxRetryAfterMs,
    };
    this.sleep = options.sleep ?? ((ms) => sleep(ms, options.signal));
    this.random = options.random ?? Math.random;
    this.transport = new Transport({
      timeoutMs: options.timeoutMs,
      trace: this.trace,
      signal: options.signal,
      scope: scopeOf(options.baseUrl),
      env: options.env,
      maxBodyBytes: options.maxBodyBytes ?? 64 * 1024 * 1024,
      maxSockets: options.maxSockets ?? 8,
      // Counted as it arrives, before anything can stop the process.
      answered: (status) => {
        if (status >= 200 && status < 300) this.onAnswer?.(status, undefined);
      },
    });
  }

  get requestCount(): number {
    return this.transport.requestCount;
  }

  url(path: string, query?: Query): string {
    return apiUrl(this.baseUrl, path, query);
  }

  async request<T = unknown>(req: ApiRequest): Promise<ApiResponse<T>> {
    const p = this.prepare(req);
    const cache = p.method === 'GET' && !req.raw && !req.anonymous && !req.uncached ? this.cache : undefined;
    const hit = cache && this.fromCache<T>(cache, req.path, p.url);
    if (hit) return hit;
    const res = await this.sendTries<T>(req, p, 1);
    cache?.stage(req.path, p.url, res);
    return res;
  }

  private fromCache<T>(cache: AnswerCache, path: string, url: string): ApiResponse<T> | undefined {
    const hit = cache.lookup(path, url);
    if (!hit) return undefined;
    const body = new Body([hit.bytes], hit.bytes.length);
    const parsed = parseJsonBody(body, hit.headers);
    if (!parsed.ok || nestedDeeperThan(parsed.value, MAX_JSON_DEPTH)) return undefined;
    this.trace?.(cacheHitLine(hit.ageMs, url));
    const requestId = shownRequestId(headerValue(hit.headers, 'x-request-id'));
    return {
      status: 200,
      headers: hit.headers,
      data: parsed.value as T,
      raw: hit.bytes,
      body,
      url,
      requestId,
      attempts: 0,
    };
  }

  /**
   * A 2xx body taken with `raw: true` that turns out not to be JSON: the policy decides as if the
   * send had just ended so, and the sends of both calls together stay within its attempts.
   */
  async retryUnreadable<T = unknown>(req: ApiRequest, res: ApiResponse<unknown>): Promise<ApiResponse<T>> {
    const p = this.prepare(req);
    const d = this.decide(p, res.attempts, { kind: 'malformed' });
    if (!d.retry)
      throw notJsonError(
        p.method,
        res.url,
        res.body,
        res.headers,
        res.requestId && redactToken(res.requestId, this.token),
      );
    await this.wait(d, res.attempts, p, req.signal);
    return this.sendTries<T>({ ...req, raw: false }, p, res.attempts + 1);
  }

  private prepare(req: ApiRequest): Prepared {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = this.url(req.path, req.query);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': userAgent(),
      ...lowerKeys(req.headers ?? {}),
    };
    let body: Buffer | undefined;
    if (req.json !== undefined) body = Buffer.from(JSON.stringify(req.json));
    else if (req.body !== undefined) body = Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
    if (body !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(body.length);
    }
    if (!req.anonymous) {
      const token = this.token;
      if (!token) {
        throw new CliError(
          'no API token for this environment',
          ExitCode.auth,
          'Log in with: imaging auth login',
        );
      }
      assertTokenTransport(url);
      const problem = tokenHeaderProblem(token);
      if (problem) throw new CliError(`the API token cannot be sent: ${problem}`, ExitCode.auth, TOKEN_HINT);
      headers.authorization = `Bearer ${token}`;
    }
    return { method, url, headers, body, retry: retries(this.policy, method, req.retry !== false) };
  }

  private async sendTries<T>(req: ApiRequest, p: Prepared, first: number): Promise<ApiResponse<T>> {
    const { method } = p;
    for (let attempt = first; ; attempt++) {
      let res: RawResponse;
      try {
        res = await this.transport.send({
          method,
          url: p.url,
          headers: p.headers,
          body: p.body,
          signal: req.signal,
        });
      } catch (err) {
        const outcome = networkOutcome(err);
        const d = outcome && this.decide(p, attempt, outcome);
        if (d?.retry) {
          await this.wait(d, attempt, p, req.signal);
          continue;
        }
        throw err instanceof TimeoutError ? err.tried(attempt) : err;
      }
      const requestId = shownRequestId(headerValue(res.headers, 'x-request-id'));
      if (res.status >= 200 && res.status < 300) {
        const parsed = req.raw
          ? { ok: true as const, value: undefined }
          : parseJsonBody(res.body, res.headers);
        if (parsed.ok && nestedDeeperThan(parsed.value, MAX_JSON_DEPTH)) {
          throw new UnreadableAnswerError(
            `${method} ${traceUrl(res.url)}: JSON nested more than ${MAX_JSON_DEPTH} levels deep`,
            requestId,
          );
        }
        if (parsed.ok) {
          const body = res.body;
          return {
            status: res.status,
            headers: res.headers,
            data: parsed.value as T,
            get raw() {
              return body.bytes;
            },
            body,
            url: res.url,
            requestId,
            attempts: attempt,
          };
        }
        const d = this.decide(p, attempt, { kind: 'malformed' });
        if (d.retry) {
          await this.wait(d, attempt, p, req.signal);
          continue;
        }
        throw notJsonError(
          method,
          res.url,
          res.body,
          res.headers,
          requestId && redactToken(requestId, this.token),
        );
      }
      const details = redactDetails(
        parseErrorBody(res.status, res.headers, res.body.bytes, this.clean),
        this.token,
      );
      const allowance = this.onAnswer?.(res.status, details.code);
      const error = new ApiError({ ...details, method, url: traceUrl(res.url), allowance });
      const d = this.decide(p, attempt, {
        kind: 'status',
        status: res.status,
        code: details.code,
        retryAfterMs: details.retryAfterSeconds !== undefined ? details.retryAfterSeconds * 1000 : undefined,
      });
      if (d.retry) {
        await this.wait(d, attempt, p, req.signal);
        continue;
      }
      throw error;
    }
  }

  private decide(p: Prepared, attempt: number, outcome: Outcome): Decision {
    if (!p.retry) return { retry: false, delayMs: 0, why: '' };
    return decide(attempt, outcome, this.policy, this.random);
  }

  private async wait(d: Decision, attempt: number, p: Prepared, extraSignal: AbortSignal | undefined) {
    this.trace?.(retryLine(d.why, d.delayMs, attempt + 1, p.retry ? this.policy.attempts : 1));
    if (extraSignal?.aborted) throw abortError(extraSignal);
    await this.sleep(d.delayMs);
    if (extraSignal?.aborted) throw abortError(extraSignal);
  }

  /**
   * A link's answer, whatever its status (a report, a document): the token goes only to a link
   * below the base URL, and plain http only to this machine.
   */
  async fetchLink(
    url: string,
    opts: {
      maxBytes: number;
      onData?: (received: number, total: number | undefined) => void;
      signal?: AbortSignal;
    },
  ): Promise<RawResponse> {
    const u = new URL(url);
    const scope = scopeOf(this.baseUrl);
    checkLinkTarget(u, scope, false);
    const headers: Record<string, string> = { accept: '*/*', 'user-agent': userAgent() };
    const below = scope !== undefined && !outsideScope(u, scope);
    if (below && this.token && !tokenHeaderProblem(this.token))
      headers.authorization = `Bearer ${this.token}`;
    const p: Prepared = { method: 'GET', url, headers, body: undefined, retry: true };
    // The API's retry policy: a dropped connection, a timeout or a 5xx is tried again.
    for (let attempt = 1; ; attempt++) {
      let res: RawResponse;
      try {
        res = await this.transport.send({
          ...p,
          signal: opts.signal,
          link: { maxBytes: opts.maxBytes, metered: below, onData: opts.onData },
        });
      } catch (err) {
        const outcome = networkOutcome(err);
        const d = outcome && this.decide(p, attempt, outcome);
        if (!d?.retry) throw err instanceof TimeoutError ? err.tried(attempt) : err;
        await this.wait(d, attempt, p, opts.signal);
        continue;
      }
      const after = parseRetryAfter(headerValue(res.headers, 'retry-after'));
      const d = this.decide(p, attempt, {
        kind: 'status',
        status: res.status,
        retryAfterMs: after === undefined ? undefined : after * 1000,
      });
      if (res.status < 400 || !d.retry) return res;
      await this.wait(d, attempt, p, opts.signal);
    }
  }

  close(): void {
    this.transport.close();
  }
}

/** The token travels only over https, or over plain http to this machine. */
function assertTokenTransport(url: string): void {
  const u = new URL(url);
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) {
    throw new UsageError(
      `refusing to send the API token over plain http to ${u.host}`,
      'Use an https:// base URL (plain http is allowed only to 127.0.0.1 / localhost).',
    );
  }
}

/** JSON.parse accepts any depth, but every walk after it would overflow the stack on a hostile one. */
export const MAX_JSON_DEPTH = 256;

/** Whether a parsed JSON value nests deeper than `limit`: never more than `limit` + 1 calls deep. */
export function nestedDeeperThan(value: unknown, limit: number, depth = 1): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth > limit) return true;
  if (Array.isArray(value)) {
    for (const child of value) if (nestedDeeperThan(child, limit, depth + 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record)
    if (Object.hasOwn(record, key) && nestedDeeperThan(record[key], limit, depth + 1)) return true;
  return false;
}

const TOKEN_HINT =
  'Copy the token again from where it was issued, then: imaging auth login --with-token < token.txt (or set IMAGING_TOKEN).';

/** Why a token cannot be an HTTP header value, in words that never quote it; undefined when it can. */
export function tokenHeaderProblem(token: string): string | undefined {
  let i = 0;
  for (const ch of token) {
    i++;
    const c = ch.codePointAt(0) ?? 0;
    if (c === 0x09 || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xff)) continue;
    const at = `at character ${i}`;
    const u = `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
    if (c === 0x0d) return `it contains a carriage return (CR) ${at}`;
    if (c === 0x0a) return `it contains a line feed (LF) ${at}`;
    if (c === 0) return `it contains a NUL character ${at}`;
    if (c < 0xa0) return `it contains a control character (${u}) ${at}`;
    return `it contains a character outside Latin-1 (${u}) ${at}, which an HTTP header cannot carry (a copy and paste may have changed it)`;
  }
  return undefined;
}

function parseJsonBody(
  body: Body,
  headers: IncomingHttpHeaders,
): { ok: true; value: unknown } | { ok: false; note: string } {
  if (body.length === 0) return { ok: true, value: null };
  const text = body.text();
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, note: notJsonNote(text, body.length, headers) };
  }
}

function notJsonNote(text: string, length: number, headers: IncomingHttpHeaders): string {
  const type = headerValue(headers, 'content-type') ?? '';
  if (/html/i.test(type) || /^\s*</.test(text)) return 'an HTML page, not JSON';
  return `truncated or malformed JSON, ${length} bytes`;
}

function notJsonError(
  method: string,
  url: string,
  body: Body,
  headers: IncomingHttpHeaders,
  requestId: string | undefined,
): NotJsonError {
  const note = notJsonNote(body.text(), body.length, headers);
  return new NotJsonError(
    `the server's answer is not valid JSON (${note}): ${method} ${traceUrl(url)}`,
    requestId ? `request id: ${requestId}` : 'The answer may have been cut short; try again.',
  );
}

function networkOutcome(err: unknown): Outcome | undefined {
  if (err instanceof TimeoutError) return { kind: 'timeout', message: err.message };
  if (err instanceof NetworkError) return { kind: 'network', code: err.code, message: err.message };
  return undefined;
}

function scopeOf(baseUrl: string): string | undefined {
  try {
    return apiScope(baseUrl);
  } catch {
    return undefined;
  }
}

function redactDetails<D extends Omit<ApiErrorDetails, 'method' | 'url'>>(
  d: D,
  token: string | undefined,
): D {
  const r = (v: string | undefined) => v && redactToken(v, token);
  return {
    ...d,
    code: r(d.code),
    type: r(d.type),
    message: r(d.message),
    errors: d.errors?.map((e) => redactToken(e, token)),
    requestId: r(d.requestId),
    documentationUrl: r(d.documentationUrl),
    bodyNote: r(d.bodyNote),
  };
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}
