import type { LookupAddress, LookupOptions } from 'node:dns';
import type { Agent as HttpAgent, IncomingHttpHeaders, IncomingMessage, RequestOptions } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { CliError, ExitCode, InterruptedError, NetworkError, TimeoutError } from '../errors.js';
import { proxyVariableSet } from './proxy.js';
import { requestLine, responseLine, shownRequestId, type Trace, timeoutLine, traceUrl } from './trace.js';
import { isLoopbackHost, outsideScope } from './url.js';

/**
 * One send: a request out, its answer's bytes back, following same-origin redirects, within the
 * timeout, stopped by the signal, and never more than the size cap. It knows nothing of tokens,
 * JSON or retries. Built on node:http rather than undici, whose import alone outweighs a lookup.
 */

interface TransportOptions {
  timeoutMs: number;
  trace?: Trace;
  signal?: AbortSignal | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  maxBodyBytes: number;
  maxSockets: number;
  /**
   * Told each answer's status before it is traced: a trace line that meets a closed stderr ends the
   * process at once, and the sandbox meter must have counted the answer by then.
   */
  answered?: (status: number) => void;
  /** Requests carry the token below this prefix: a redirect out of it is not followed, even on the same origin. */
  scope?: string | undefined;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Body;
  url: string;
}

/**
 * A response body's bytes, copied into one buffer (`store`) so the socket's read buffers die young;
 * a page walk hands the buffer back with `release()` once the page is parsed, for the next answer.
 */
export class Body {
  private joined: Buffer | undefined;
  private released = false;
  constructor(
    private readonly parts: readonly Buffer[],
    readonly length: number,
    private store?: Buffer,
  ) {}
  get chunks(): readonly Buffer[] {
    if (this.released) throw new CliError('internal: a response body was read after its release');
    return this.parts;
  }
  release(): void {
    const store = this.store;
    this.released = true;
    this.store = undefined;
    this.joined = undefined;
    if (store) spareBuffers.give(store);
  }
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

/** Buffers of released bodies, never more than a walk holds at once (`concurrency` + 1). */
const spareBuffers = {
  list: [] as Buffer[],
  take(min: number): Buffer {
    const i = this.list.findIndex((b) => b.length >= min);
    if (i >= 0) return this.list.splice(i, 1)[0] as Buffer;
    return Buffer.allocUnsafeSlow(Math.max(min, 16 * 1024));
  },
  give(buf: Buffer): void {
    if (this.list.length < 17 && buf.length <= 4 * 1024 * 1024) this.list.push(buf);
  },
};

function grown(store: Buffer | undefined, used: number, min: number, max: number): Buffer {
  const next = spareBuffers.take(Math.max(min, Math.min(max, (store?.length ?? 0) * 2)));
  store?.copy(next, 0, 0, used);
  return next;
}

/** An answer's bytes as they arrive, in room for what the server announced (up to 4 MiB). */
class Collected {
  private store: Buffer | undefined;
  private size = 0;
  private readonly first: number;
  constructor(
    announced: string | undefined,
    private readonly max: number,
  ) {
    const n = Number(announced);
    this.first = Number.isSafeInteger(n) && n > 0 ? Math.min(n, 4 << 20) : 0;
  }
  add(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.max) return false;
    if (!this.store || this.size > this.store.length)
      this.store = grown(this.store, this.size - chunk.length, Math.max(this.size, this.first), this.max);
    chunk.copy(this.store, this.size - chunk.length);
    return true;
  }
  body(): Body {
    return new Body(this.store ? [this.store.subarray(0, this.size)] : [], this.size, this.store);
  }
}

interface Outgoing {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  signal: AbortSignal | undefined;
  /**
   * A link to fetch (a report, a document): a redirect may go to any http(s) origin, leaving the
   * base URL drops Authorization, the query string is never traced, and the size cap and progress
   * are its own.
   */
  link?:
    | {
        maxBytes: number;
        /** Whether the answer counts against the allowance (a link below the base URL). */
        metered: boolean;
        onData?: ((received: number, total: number | undefined) => void) | undefined;
      }
    | undefined;
}

const MAX_REDIRECTS = 5;

export class Transport {
  private agents = new Map<string, HttpAgent>();
  requestCount = 0;

  constructor(private readonly opts: TransportOptions) {}

  async send(first: Outgoing): Promise<RawResponse> {
    let out = first;
    const { method, url } = out;
    let current = url;
    for (let hop = 0; ; hop++) {
      const res = await this.sendOnce({ ...out, url: current });
      const location = headerValue(res.headers, 'location');
      if (![301, 302, 303, 307, 308].includes(res.status) || !location) return res;
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw new CliError(
          `the server redirected (HTTP ${res.status}) to an address that is not a valid URL; imaging stopped`,
          ExitCode.failure,
          'Check the base URL: imaging config get base-url',
        );
      }
      if (out.link) {
        out = { ...out, headers: linkHop(next, out.headers, this.opts.scope) };
        if (hop + 1 >= MAX_REDIRECTS) throw new CliError(`too many redirects from ${linkUrl(url)}`);
        current = next.toString();
        continue;
      }
      if (next.origin !== new URL(current).origin) {
        throw new CliError(
          `the server redirected to another host (${next.host}); imaging does not send your token there and stopped`,
          ExitCode.failure,
          'Check the base URL: imaging config get base-url',
        );
      }
      const scope = this.opts.scope;
      if (scope && outsideScope(next, scope)) {
        throw new CliError(
          `the server redirected to ${traceUrl(`${next.origin}${next.pathname}`)}, outside ${traceUrl(scope)}; imaging sends your token only below the base URL and stopped`,
          ExitCode.failure,
          'Check the base URL (its path prefix): imaging config get base-url',
        );
      }
      if (!(method === 'GET' || method === 'HEAD')) {
        throw new CliError(`the server redirected a ${method} request (HTTP ${res.status}); not repeated`);
      }
      if (hop + 1 >= MAX_REDIRECTS) throw new CliError(`too many redirects from ${traceUrl(url)}`);
      current = next.toString();
    }
  }

  private async route(url: string, extraSignal: AbortSignal | undefined) {
    const signals = [this.opts.signal, extraSignal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    if (signal?.aborted) throw abortError(signal);
    const u = new URL(url);
    // As CommonJS: `import('node:http')` builds an ES module facade whose getters load Node's undici.
    const mod = process.getBuiltinModule(u.protocol === 'https:' ? 'node:https' : 'node:http');
    const env = this.opts.env ?? process.env;
    const proxied = proxyVariableSet(env) ? await this.proxyAgentFor(u, env) : undefined;
    if (signal?.aborted) throw abortError(signal);
    return { signal, u, mod, agent: proxied ?? this.agentFor(u.protocol, mod) };
  }

  private async sendOnce(out: Outgoing): Promise<RawResponse> {
    const { method, url, headers, body } = out;
    const { signal, u, mod, agent } = await this.route(url, out.signal);
    const started = Date.now();
    const link = out.link;
    const shown = link ? linkUrl(u.href) : traceUrl(u.href);
    this.opts.trace?.(link ? `> ${method} ${shown}` : requestLine(method, u.href));
    const maxBytes = link?.maxBytes ?? this.opts.maxBodyBytes;
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
      // Certificates are always checked: NODE_TLS_REJECT_UNAUTHORIZED=0 never turns them off here.
      const options: RequestOptions & { rejectUnauthorized?: boolean } = {
        method,
        headers,
        agent,
        rejectUnauthorized: true,
        // A link's name may resolve to this machine (a hosts entry, its own address): checked as it connects.
        ...(link && !localScope(this.opts.scope) && !onBase(u, this.opts.scope)
          ? { lookup: notThisMachine(u.host) }
          : {}),
      };
      const req = mod.request(u, options, (res: IncomingMessage) => {
        const announced = headerValue(res.headers, 'content-length');
        const collected = new Collected(announced, maxBytes);
        const total = Number(announced) >= 0 && announced !== undefined ? Number(announced) : undefined;
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (collected.add(chunk)) return void link?.onData?.(received, total);
          req.destroy();
          finish(() => reject(new CliError(`response larger than ${maxBytes} bytes from ${shown}`)));
        });
        res.on('end', () => {
          const ms = Math.round(Date.now() - started);
          const rid = shownRequestId(headerValue(res.headers, 'x-request-id'));
          if (!link || link.metered) this.opts.answered?.(res.statusCode ?? 0);
          this.opts.trace?.(responseLine(res.statusCode ?? 0, res.statusMessage ?? '', ms, rid));
          finish(() =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: collected.body(),
              url,
            }),
          );
        });
        res.on('error', (err) => finish(() => reject(toNetworkError(err, url, shown))));
        res.on('aborted', () =>
          finish(() =>
            reject(new NetworkError(`connection closed mid-response: ${shown}`, url, 'ECONNRESET')),
          ),
        );
      });
      const timer = setTimeout(() => {
        this.opts.trace?.(timeoutLine(timeoutMs));
        req.destroy();
        finish(() => reject(new TimeoutError(shown, timeoutMs)));
      }, timeoutMs);
      const onAbort = () => {
        req.destroy();
        finish(() => reject(abortError(signal)));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => finish(() => reject(toNetworkError(err, url, shown))));
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

  private async proxyAgentFor(u: URL, env: NodeJS.ProcessEnv): Promise<HttpAgent | undefined> {
    return (await import('./proxy.js')).proxyAgent(u, env, this.agents, this.opts);
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/** A link as a trace or an error shows it: a signed link's query string is a credential, never shown. */
export function linkUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}${u.search ? '?[redacted]' : ''}`;
}

/**
 * Where a link (a report, a document) or any of its redirects may go: the base URL's own origin (the API
 * server itself); else http(s) only, plain http only to this machine, and this machine only when the
 * base URL is on it (the emulator): a remote server's link never makes imaging fetch a local service
 * into the case folder.
 */
export function checkLinkTarget(u: URL, scope: string | undefined, redirected: boolean): void {
  const what = redirected ? 'the link redirected to' : 'a link to';
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    throw new CliError(`${what} a ${u.protocol} address; imaging fetches only http(s)`);
  const local = isThisMachine(hostOf(u));
  if (u.protocol === 'http:' && !local && !onBase(u, scope))
    throw new CliError(`${what} plain http (${u.host}); imaging fetches links only over https`);
  if (local && !localScope(scope) && !onBase(u, scope))
    throw new CliError(
      `${what} this machine (${u.host}) from a server elsewhere; imaging fetches such links only from the emulator`,
    );
}

/** A loopback name or address, or an address of one of this machine's interfaces (an IP literal's own test). */
function isThisMachine(host: string): boolean {
  if (isLoopbackHost(host)) return true;
  if (!process.getBuiltinModule('node:net').isIP(host)) return false;
  const interfaces = Object.values(process.getBuiltinModule('node:os').networkInterfaces());
  return interfaces.some((list) => (list ?? []).some((a) => a.address === host.toLowerCase()));
}

const hostOf = (u: URL) => u.hostname.replace(/^\[|\]$/g, '');

/** The base URL is on this machine (a loopback name, or one of its own addresses): the emulator, or a server here. */
const localScope = (scope: string | undefined) =>
  scope !== undefined && isThisMachine(hostOf(new URL(scope)));

/** A link on the base URL's own origin: the API server itself, whatever address its name has. */
const onBase = (u: URL, scope: string | undefined) =>
  scope !== undefined && new URL(scope).origin === u.origin;

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A DNS lookup for a link from a server elsewhere that refuses an address of this machine (loopback, or
 * one of its interfaces'): the rule of checkLinkTarget, applied to where the name really leads.
 */
function notThisMachine(host: string) {
  return (hostname: string, opts: LookupOptions, cb: LookupCallback) => {
    // Loaded here, for links only: a lookup never needs it.
    process.getBuiltinModule('node:dns').lookup(hostname, { ...opts, all: true }, (err, found) => {
      if (err) return cb(err, '');
      const local = found.find((a) => isThisMachine(a.address));
      if (local)
        return cb(
          new CliError(
            `a link to ${host}, which is this machine (${local.address}), from a server elsewhere; imaging fetches such links only from the emulator`,
          ),
          '',
        );
      if (opts.all) return cb(null, found);
      cb(null, found[0]!.address, found[0]!.family);
    });
  };
}

/** The headers of a link's next hop: Authorization only below the base URL (`scope`), dropped for good once a redirect leaves it. */
function linkHop(
  next: URL,
  headers: Record<string, string>,
  scope: string | undefined,
): Record<string, string> {
  checkLinkTarget(next, scope, true);
  if (!headers.authorization || (scope && !outsideScope(next, scope))) return headers;
  const { authorization: _, ...rest } = headers;
  return rest;
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  if (Array.isArray(v)) return v[0];
  return v;
}

const PROXY_HINT =
  'Check the base URL (imaging config get base-url). If this network goes out only through a proxy, set HTTPS_PROXY=http://HOST:PORT.';

function toNetworkError(err: unknown, url: string, shown = traceUrl(url)): CliError {
  if (err instanceof CliError) return err;
  const e = err as NodeJS.ErrnoException;
  const code = e.code;
  const origin = new URL(url).origin;
  switch (code) {
    case 'ECONNREFUSED': {
      const u = new URL(url);
      const port = u.port && u.port !== '4010' ? ` --port ${u.port}` : '';
      return new NetworkError(
        `connection refused by ${origin}`,
        url,
        code,
        isLoopbackHost(u.hostname)
          ? `Nothing is listening there. For the local emulator, start it first: imaging mock${port}; if it runs on another port, name it: --base-url http://127.0.0.1:PORT`
          : undefined,
      );
    }
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new NetworkError(`cannot resolve host ${new URL(url).hostname}`, url, code, PROXY_HINT);
    case 'ECONNRESET':
    case 'EPIPE':
      return new NetworkError(`connection reset by ${origin} during ${shown}`, url, code);
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'CERT_UNTRUSTED':
      return new NetworkError(
        `TLS certificate problem with ${origin}: ${e.message}`,
        url,
        code,
        'The certificate is not signed by a CA this machine trusts. If a private or corporate CA signed it, name that CA: NODE_EXTRA_CA_CERTS=/path/to/ca.pem imaging …',
      );
    case 'CERT_HAS_EXPIRED':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return new NetworkError(`TLS certificate problem with ${origin}: ${e.message}`, url, code);
    default:
      return new NetworkError(`network error talking to ${origin}: ${e.message}`, url, code);
  }
}

/** Why a request stopped: the signal's own reason when it is one of ours. */
export function abortError(signal: AbortSignal | undefined): CliError {
  const reason: unknown = signal?.reason;
  return reason instanceof CliError ? reason : new InterruptedError();
}
