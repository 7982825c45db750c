import type { ClientRequest, Agent as HttpAgent } from 'node:http';
import type { Socket } from 'node:net';
import { CliError, ExitCode, NetworkError, UsageError } from '../errors.js';
import type { Trace } from './trace.js';
import { isLoopbackHost } from './url.js';

/**
 * HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY read as curl reads them, and the CONNECT tunnel
 * (the API's TLS runs inside it). This machine is never proxied, as in Go and gh.
 */

const SCHEME_VARIABLES: Record<string, readonly string[]> = {
  'https:': ['https_proxy', 'HTTPS_PROXY'],
  'http:': ['http_proxy', 'HTTP_PROXY'],
};
const ALL_VARIABLES = ['all_proxy', 'ALL_PROXY'];

/** Whether any variable names a proxy (an empty value is unset, as for curl). */
export function proxyVariableSet(env: NodeJS.ProcessEnv): boolean {
  return Boolean(
    env.https_proxy || env.HTTPS_PROXY || env.http_proxy || env.HTTP_PROXY || env.all_proxy || env.ALL_PROXY,
  );
}

interface ProxyChoice {
  url: URL;
  /** `host:port`: all that is ever shown of it. */
  shown: string;
  variable: string;
  authorization: string | undefined;
  /** The agents' key (never shown). */
  value: string;
}

export function chooseProxy(target: URL, env: NodeJS.ProcessEnv): ProxyChoice | undefined {
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (isLoopbackHost(host)) return undefined;
  const names = [...(SCHEME_VARIABLES[target.protocol] ?? []), ...ALL_VARIABLES];
  const variable = names.find((n) => env[n]);
  if (!variable) return undefined;
  const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  if (bypassed(host, port, env.no_proxy || env.NO_PROXY || '')) return undefined;
  return parseProxy(variable, env[variable]!);
}

/**
 * NO_PROXY as curl reads it: `*` for every host; a name matches itself and its subdomains
 * (`*.example.com` as `.example.com`, as Go does); an address by CIDR prefix, never resolved; an
 * entry with a port matches that port only, as in Go.
 */
export function bypassed(host: string, port: number, noProxy: string): boolean {
  const list = noProxy.trim();
  if (list === '') return false;
  if (list === '*') return true;
  const net = process.getBuiltinModule('node:net');
  const family = net.isIP(host);
  const name = host.toLowerCase().replace(/\.$/, '');
  for (const entry of list.split(/[\s,]+/)) {
    if (!entry) continue;
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? /^([^:]*)(?::(\d+))?$/.exec(entry) ?? [entry, entry];
    const pattern = m[1]!;
    if (m[2] !== undefined && Number(m[2]) !== port) continue;
    if (family) {
      const [address = '', bits] = pattern.split('/');
      const type = family === 6 ? 'ipv6' : 'ipv4';
      if (net.isIP(address) !== family) continue;
      try {
        const block = new net.BlockList();
        if (bits === undefined) block.addAddress(address, type);
        else block.addSubnet(address, Number(bits), type);
        if (block.check(host, type)) return true;
      } catch {}
      continue;
    }
    const suffix = pattern
      .toLowerCase()
      .replace(/^\*?\./, '')
      .replace(/\.$/, '');
    if (suffix && (name === suffix || name.endsWith(`.${suffix}`))) return true;
  }
  return false;
}

/** The proxy a variable names, as curl reads it. A bad value names the variable alone: it may hold a password. */
function parseProxy(variable: string, value: string): ProxyChoice {
  const raw = value.trim();
  const fix = `Set ${variable} to http://HOST:PORT (with USER:PASSWORD@ before the host if the proxy asks for one), or unset it.`;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z\d+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new UsageError(`${variable} is not a proxy URL`, fix);
  }
  if (url.protocol.startsWith('socks'))
    throw new UsageError(
      `${variable} names a SOCKS proxy (${url.protocol}//); imaging goes through HTTP proxies only`,
      fix,
    );
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    throw new UsageError(`${variable} is not an http:// or https:// proxy URL`, fix);
  let credentials: string | undefined;
  try {
    credentials =
      url.username || url.password
        ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
        : undefined;
  } catch {
    // The message names the variable, never its value: the value holds the password.
    throw new UsageError(`${variable} has a user or password with a broken %-escape`, fix);
  }
  const authorization = credentials ? `Basic ${Buffer.from(credentials).toString('base64')}` : undefined;
  const port = url.port || (url.protocol === 'https:' ? '443' : '1080');
  const bare = new URL(`${url.protocol}//${url.hostname}:${port}`);
  return { url: bare, shown: `${url.hostname}:${port}`, variable, authorization, value };
}

/** The agent for `target` through its proxy (one per proxy and scheme), or undefined to go direct. */
export async function proxyAgent(
  target: URL,
  env: NodeJS.ProcessEnv,
  agents: Map<string, HttpAgent>,
  opts: { maxSockets: number; trace?: Trace },
): Promise<HttpAgent | undefined> {
  const proxy = chooseProxy(target, env);
  if (!proxy) return undefined;
  const key = `proxy ${target.protocol} ${proxy.value}`;
  let agent = agents.get(key);
  if (!agent) {
    const { HttpsProxyAgent } = await import('https-proxy-agent');
    agent = new (tunnelAgent(HttpsProxyAgent))(proxy, {
      keepAlive: true,
      maxSockets: opts.maxSockets,
      // Sent on each CONNECT, never in the URL the library keeps (its DEBUG log prints that).
      headers: proxy.authorization ? { 'Proxy-Authorization': proxy.authorization } : {},
    }) as HttpAgent;
    agents.set(key, agent);
    opts.trace?.(`* via proxy ${proxy.shown} (${proxy.variable})`);
  }
  return agent;
}

type Connect = { statusCode: number; statusText: string; headers: Record<string, string | string[]> };

/**
 * The library's agent, its failures said as what they are: a proxy out of reach, or one refusing
 * the CONNECT (the library would hand that answer on as if the API had sent it).
 */
function tunnelAgent(Base: typeof import('https-proxy-agent').HttpsProxyAgent) {
  return class Tunnel extends Base<string> {
    private readonly choice: ProxyChoice;
    private readonly stop: AbortController;
    constructor(choice: ProxyChoice, opts: ConstructorParameters<typeof Base>[1]) {
      // Every socket to the proxy carries this signal: one still waiting for a CONNECT answer
      // belongs to no request the transport can end, and would keep the process alive.
      const stop = new AbortController();
      super(choice.url.href, { ...opts, signal: stop.signal });
      this.choice = choice;
      this.stop = stop;
    }
    override destroy(): void {
      this.stop.abort();
      super.destroy();
    }
    override async connect(
      req: ClientRequest,
      opts: Parameters<InstanceType<typeof Base>['connect']>[1],
    ): Promise<Socket> {
      let answer: Connect | undefined;
      req.once('proxyConnect', (c: Connect) => {
        answer = c;
      });
      const target = `${opts.host}:${opts.port}`;
      let socket: Socket;
      try {
        socket = await super.connect(req, opts);
      } catch (err) {
        throw unreachable(this.choice, target, err);
      }
      if (answer && answer.statusCode !== 200) {
        socket.destroy();
        throw refused(this.choice, target, answer);
      }
      return socket;
    }
  };
}

function unreachable(proxy: ProxyChoice, target: string, err: unknown): CliError {
  if (err instanceof CliError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? `cannot resolve ${proxy.url.hostname}`
        : code === 'ECONNRESET' || /ended before/i.test((err as Error).message)
          ? 'it closed the connection without answering'
          : (code ?? (err as Error).message);
  return new NetworkError(
    `cannot reach the proxy ${proxy.shown} (from ${proxy.variable}) to connect to ${target}: ${why}`,
    `https://${target}`,
    code,
    `Check ${proxy.variable}, or list ${target.replace(/:\d+$/, '')} in NO_PROXY to go direct.`,
  );
}

function refused(proxy: ProxyChoice, target: string, answer: Connect): CliError {
  const status = `HTTP ${answer.statusCode}${answer.statusText ? ` ${answer.statusText}` : ''}`;
  if (answer.statusCode === 407) {
    return new CliError(
      proxy.authorization
        ? `the proxy ${proxy.shown} (from ${proxy.variable}) refused its credentials (${status})`
        : `the proxy ${proxy.shown} (from ${proxy.variable}) asks for credentials (${status})`,
      ExitCode.failure,
      `Put them in the variable: ${proxy.variable}=http://USER:PASSWORD@${proxy.shown} (percent-encode @ : / in them).`,
    );
  }
  return new CliError(
    `the proxy ${proxy.shown} (from ${proxy.variable}) refused to connect to ${target} (${status})`,
    ExitCode.failure,
    `Ask whoever runs the proxy to allow ${target}, or list it in NO_PROXY if it is reachable directly.`,
  );
}
