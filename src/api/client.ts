import type { Agent as HttpAgent, IncomingHttpHeaders, IncomingMessage, RequestOptions } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import {
  ApiError,
  CliError,
  ExitCode,
  InterruptedError,
  NetworkError,
  TimeoutError,
  UsageError,
} from '../errors.js';
import { userAgent } from '../version.js';
import { parseErrorBody } from './errors.js';
import { apiUrl, isLoopbackHost, type Query, traceUrl } from './url.js';

/**
 * The thin HTTP layer: URL join, auth, timeouts, retries, the error envelope, redirects.
 *
 * It is built on node:http/https rather than undici: measured on Node 20, importing undici
 * costs ~90 ms and its first request another ~15 ms (WASM parser), against ~60 ms for a whole
 * bare `node -e 0`, which would put every lookup at ~2x Node's start-up. node:http answers a
 * first request in ~10 ms. See README "Speed".
 */

export interface ApiClientOptions {
  baseUrl: string;
  token?: string | undefined;
  timeoutMs: number;
  /** Trace lines (--verbose) go here; undefined means no trace. */
  trace?: ((line: string) => void) | undefined;
  /** Tries in all for a retryable GET (1 disables retries). */
  maxAttempts?: number;
  baseDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the error is shown instead. */
  maxRetryAfterMs?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  signal?: AbortSignal | undefined;
  /** Largest response body accepted, in bytes. */
  maxBodyBytes?: number;
  /** Parallel connections per host for concurrent page fetches. */
  maxSockets?: number;
}

export interface ApiRequest {
  method?: string;
  path: string;
  query?: Query | undefined;
  /** A JSON value to send; serialised here. */
  json?: unknown;
  /** Raw bytes or text to send as the body, as given (already JSON). */
  body?: string | Buffer | undefined;
  headers?: Record<string, string>;
  /** Defaults to true for GET and HEAD, and is never honoured for other methods. */
  retry?: boolean;
  /** Send no Authorization header (none of the API's endpoints want that, but tests do). */
  anonymous?: boolean;
  /** Cancels this request (and its retries) besides the client's own signal. */
  signal?: AbortSignal | undefined;
  /** Leave a 2xx body unparsed (`data` is undefined): for `imaging api` on non-JSON answers. */
  raw?: boolean;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: IncomingHttpHeaders;
  data: T;
  /** The body's bytes as they came (joined on first use). */
  readonly raw: Buffer;
  body: Body;
  url: string;
  requestId: string | undefined;
  attempts: number;
}

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Body;
  url: string;
}

/**
 * A response body kept as the chunks that arrived. Decoding them one by one avoids joining a
 * large body into one more big buffer: over a long export, such short-lived large allocations
 * fragment the C heap and RSS creeps up.
 */
export class Body {
  private joined: Buffer | undefined;
  constructor(
    private readonly chunks: Buffer[],
    readonly length: number,
  ) {}
  get bytes(): Buffer {
    this.joined ??= this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
    return this.joined;
  }
  text(): string {
    if (this.joined || this.chunks.length === 1) return this.bytes.toString('utf8');
    const decoder = new StringDecoder('utf8');
    let text = '';
    for (const chunk of this.chunks) text += decoder.write(chunk);
    return text + decoder.end();
  }
}

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);
const RETRYABLE_NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'ERR_STREAM_PREMATURE_CLOSE',
  'HPE_INVALID_CONSTANT',
]);
const MAX_REDIRECTS = 5;

export class ApiClient {
  readonly baseUrl: string;
  private readonly opts: Required<Omit<ApiClientOptions, 'token' | 'trace' | 'signal'>> &
    Pick<ApiClientOptions, 'token' | 'trace' | 'signal'>;
  private agents = new Map<string, HttpAgent>();
  /** Requests sent, retries included (the export summary reports it). */
  requestCount = 0;

  constructor(options: ApiClientOptions) {
    this.baseUrl = options.baseUrl;
    this.opts = {
      maxAttempts: 3,
      baseDelayMs: 300,
      maxRetryAfterMs: 60_000,
      sleep: (ms) => sleep(ms, options.signal),
      random: Math.random,
      maxBodyBytes: 64 * 1024 * 1024,
      maxSockets: 8,
      ...options,
    };
  }

  url(path: string, query?: Query): string {
    return apiUrl(this.baseUrl, path, query);
  }

  async request<T = unknown>(req: ApiRequest): Promise<ApiResponse<T>> {
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
      const token = this.opts.token;
      if (!token) {
        throw new CliError(
          'no API token for this environment',
          ExitCode.auth,
          'Log in with: imaging auth login',
        );
      }
      assertTokenTransport(url);
      headers.authorization = `Bearer ${token}`;
    }
    const idempotent = method === 'GET' || method === 'HEAD';
    const retry = idempotent && req.retry !== false;
    const attempts = retry ? Math.max(1, this.opts.maxAttempts) : 1;

    for (let attempt = 1; ; attempt++) {
      let res: RawResponse;
      try {
        res = await this.send(method, url, headers, body, req.signal);
      } catch (err) {
        if (retry && attempt < attempts && isRetryableNetworkError(err)) {
          await this.backoff(attempt, attempts, describeNetworkError(err), undefined, req.signal);
          continue;
        }
        throw err;
      }
      const requestId = headerValue(res.headers, 'x-request-id');
      if (res.status >= 200 && res.status < 300) {
        const parsed = req.raw
          ? { ok: true as const, value: undefined }
          : parseJsonBody(res.body, res.headers);
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
        if (retry && attempt < attempts) {
          await this.backoff(attempt, attempts, 'malformed response body', undefined, req.signal);
          continue;
        }
        throw new CliError(
          `the server's answer is not valid JSON (${parsed.note}): ${method} ${traceUrl(res.url)}`,
          ExitCode.failure,
          requestId ? `request id: ${requestId}` : 'The answer may have been cut short; try again.',
        );
      }
      const details = parseErrorBody(res.status, res.headers, res.body.bytes);
      const error = new ApiError({ ...details, method, url: traceUrl(res.url) });
      if (retry && attempt < attempts) {
        const retryAfterMs =
          details.retryAfterSeconds !== undefined ? details.retryAfterSeconds * 1000 : undefined;
        const retryable429 =
          res.status === 429 &&
          details.code !== 'sandbox_request_limit_reached' &&
          retryAfterMs !== undefined;
        if (
          (RETRYABLE_STATUS.has(res.status) || retryable429) &&
          (retryAfterMs === undefined || retryAfterMs <= this.opts.maxRetryAfterMs)
        ) {
          await this.backoff(attempt, attempts, `HTTP ${res.status}`, retryAfterMs, req.signal);
          continue;
        }
      }
      throw error;
    }
  }

  private async backoff(
    attempt: number,
    attempts: number,
    why: string,
    retryAfterMs: number | undefined,
    extraSignal: AbortSignal | undefined,
  ) {
    const exp = this.opts.baseDelayMs * 2 ** (attempt - 1);
    // "Equal jitter": half fixed, half random, so retries from many clients spread out.
    const delay = retryAfterMs ?? Math.round(exp / 2 + this.opts.random() * (exp / 2));
    this.opts.trace?.(`* ${why}; retrying in ${delay} ms (try ${attempt + 1} of ${attempts})`);
    if (extraSignal?.aborted) throw abortError(extraSignal);
    await this.opts.sleep(delay);
    if (extraSignal?.aborted) throw abortError(extraSignal);
  }

  private async send(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    extraSignal: AbortSignal | undefined,
  ): Promise<RawResponse> {
    let current = url;
    for (let hop = 0; ; hop++) {
      const res = await this.sendOnce(method, current, headers, body, extraSignal);
      const location = headerValue(res.headers, 'location');
      if (![301, 302, 303, 307, 308].includes(res.status) || !location) return res;
      const next = new URL(location, current);
      if (next.origin !== new URL(current).origin) {
        throw new CliError(
          `the server redirected to another host (${next.host}); imaging does not send your token there and stopped`,
          ExitCode.failure,
          'Check the base URL: imaging config get base-url',
        );
      }
      if (!(method === 'GET' || method === 'HEAD')) {
        throw new CliError(`the server redirected a ${method} request (HTTP ${res.status}); not repeated`);
      }
      if (hop + 1 >= MAX_REDIRECTS) throw new CliError(`too many redirects from ${traceUrl(url)}`);
      current = next.toString();
    }
  }

  private async sendOnce(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    extraSignal: AbortSignal | undefined,
  ): Promise<RawResponse> {
    const signals = [this.opts.signal, extraSignal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    if (signal?.aborted) throw abortError(signal);
    const u = new URL(url);
    const isHttps = u.protocol === 'https:';
    // Loaded on first use, as plain CommonJS: `import('node:http')` builds an ES module facade that
    // reads every export, and node:http's lazy `WebSocket`/`EventSource` getters then load all of
    // Node's bundled undici (~13 ms of a lookup measured on Node 24).
    const mod = isHttps ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
    const agent = this.agentFor(u.protocol, mod);
    const started = Date.now();
    const shown = traceUrl(url);
    this.opts.trace?.(`> ${method} ${shown}`);
    this.requestCount++;
    const timeoutMs = this.opts.timeoutMs;

    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const options: RequestOptions = { method, headers, agent };
      const req = mod.request(u, options, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.opts.maxBodyBytes) {
            req.destroy();
            finish(() =>
              reject(new CliError(`response larger than ${this.opts.maxBodyBytes} bytes from ${shown}`)),
            );
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const ms = Math.round(Date.now() - started);
          const rid = headerValue(res.headers, 'x-request-id');
          this.opts.trace?.(
            `< ${res.statusCode ?? 0} ${res.statusMessage ?? ''} ${ms} ms${rid ? ` request-id=${rid}` : ''}`.replace(
              '  ',
              ' ',
            ),
          );
          finish(() =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: new Body(chunks, size), url }),
          );
        });
        res.on('error', (err) => finish(() => reject(toNetworkError(err, url))));
        res.on('aborted', () =>
          finish(() =>
            reject(new NetworkError(`connection closed mid-response: ${shown}`, url, 'ECONNRESET')),
          ),
        );
      });
      const timer = setTimeout(() => {
        this.opts.trace?.(`< timeout after ${timeoutMs} ms`);
        req.destroy();
        finish(() => reject(new TimeoutError(shown, timeoutMs)));
      }, timeoutMs);
      const onAbort = () => {
        req.destroy();
        finish(() => reject(abortError(signal)));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => finish(() => reject(toNetworkError(err, url))));
      if (body !== undefined) req.end(body);
      else req.end();
    });
  }

  private agentFor(
    protocol: string,
    mod: typeof import('node:http') | typeof import('node:https'),
  ): HttpAgent {
    let agent = this.agents.get(protocol);
    if (!agent) {
      agent = new mod.Agent({ keepAlive: true, maxSockets: this.opts.maxSockets }) as HttpAgent;
      this.agents.set(protocol, agent);
    }
    return agent;
  }

  /** Closes kept-alive sockets so the process can exit at once. */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/** The token travels only over https, or over plain http to this machine. */
export function assertTokenTransport(url: string): void {
  const u = new URL(url);
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) {
    throw new UsageError(
      `refusing to send the API token over plain http to ${u.host}`,
      'Use an https:// base URL (plain http is allowed only to 127.0.0.1 / localhost).',
    );
  }
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
    const type = headerValue(headers, 'content-type') ?? '';
    if (/html/i.test(type) || /^\s*</.test(text)) return { ok: false, note: 'an HTML page, not JSON' };
    return { ok: false, note: `truncated or malformed JSON, ${body.length} bytes` };
  }
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  if (Array.isArray(v)) return v[0];
  return v;
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

function toNetworkError(err: unknown, url: string): CliError {
  if (err instanceof CliError) return err;
  const e = err as NodeJS.ErrnoException;
  const code = e.code;
  const shown = traceUrl(url);
  const origin = new URL(url).origin;
  switch (code) {
    case 'ECONNREFUSED':
      return new NetworkError(`connection refused by ${origin}`, url, code);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new NetworkError(`cannot resolve host ${new URL(url).hostname}`, url, code);
    case 'ECONNRESET':
    case 'EPIPE':
      return new NetworkError(`connection reset by ${origin} during ${shown}`, url, code);
    case 'CERT_HAS_EXPIRED':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return new NetworkError(`TLS certificate problem with ${origin}: ${e.message}`, url, code);
    default:
      return new NetworkError(`network error talking to ${origin}: ${e.message}`, url, code);
  }
}

function isRetryableNetworkError(err: unknown): boolean {
  if (err instanceof TimeoutError) return true;
  if (err instanceof NetworkError) return err.code !== undefined && RETRYABLE_NETWORK.has(err.code);
  return false;
}

function describeNetworkError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Why a request stopped: the signal's own reason when it is one of ours (an interrupt, another page's failure). */
function abortError(signal: AbortSignal | undefined): CliError {
  const reason: unknown = signal?.reason;
  return reason instanceof CliError ? reason : new InterruptedError();
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new InterruptedError());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new InterruptedError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
