import { UsageError } from '../errors.js';

type QueryValue = string | number | boolean | null | undefined | ReadonlyArray<string | number>;
export type Query = Record<string, QueryValue>;

const API_PREFIX = '/api/v2';

export function normaliseBaseUrl(input: string, source = 'base URL'): string {
  const given = input.trim();
  // `localhost:4010` parses as a URL whose scheme is "localhost:": say what was meant instead. Both
  // cases spelt out rather than /i, whose case tables V8 builds when the regex is made.
  if (/^(?:\[[0-9a-fA-F:.]+\]|[\w.-]+)(?::\d+)?(?:\/\S*)?$/.test(given)) {
    const host = given.startsWith('[') ? given.slice(1, given.indexOf(']')) : given.replace(/[:/].*$/, '');
    const guess = `${isLoopbackHost(host) ? 'http' : 'https'}://${given}`;
    throw new UsageError(
      `${source}: "${input}" has no scheme (http:// or https://)`,
      `Did you mean ${guess}?`,
    );
  }
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new UsageError(
      `${source}: "${input}" is not a URL`,
      'Give the part before /api/v2, e.g. https://api.example.com',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`${source}: only http and https URLs are supported, not ${url.protocol}`);
  }
  // Node sends to the scheme's default port (80/443) when the URL says :0: refused, not redirected.
  if (url.port === '0') throw new UsageError(`${source}: port 0 is not a port anything listens on`);
  if (url.username || url.password) {
    throw new UsageError(
      `${source}: credentials in the URL are not allowed`,
      'Use imaging auth login for the token.',
    );
  }
  if (url.search || url.hash) {
    throw new UsageError(`${source}: a base URL cannot carry a query string or fragment`);
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (path.toLowerCase().endsWith(API_PREFIX)) path = path.slice(0, -API_PREFIX.length);
  return `${url.protocol}//${url.host}${path}`;
}

export function encodeQuery(query: Query | undefined): string {
  if (!query) return '';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      const name = key.endsWith('[]') ? key : `${key}[]`;
      for (const item of value) parts.push(`${encodeKey(name)}=${encodeURIComponent(String(item))}`);
    } else {
      parts.push(`${encodeKey(key)}=${encodeURIComponent(String(value))}`);
    }
  }
  return parts.join('&');
}

function encodeKey(key: string): string {
  return encodeURIComponent(key).replace(/%5B/gi, '[').replace(/%5D/gi, ']');
}

/** Joins the base URL (maybe with a path prefix), an API path with or without /api/v2, and a query. */
export function apiUrl(baseUrl: string, path: string, query?: Query): string {
  const base = normaliseBaseUrl(baseUrl);
  let p = path.trim();
  let ownQuery = '';
  const q = p.indexOf('?');
  if (q >= 0) {
    ownQuery = p.slice(q + 1);
    p = p.slice(0, q);
  }
  if (!p.startsWith('/')) p = `/${p}`;
  if (p.toLowerCase() === API_PREFIX) p = '';
  else if (p.toLowerCase().startsWith(`${API_PREFIX}/`)) p = p.slice(API_PREFIX.length);
  const encoded = [ownQuery, encodeQuery(query)].filter((s) => s !== '').join('&');
  const url = `${base}${API_PREFIX}${p}${encoded ? `?${encoded}` : ''}`;
  // The token goes only below the base URL's /api/v2: a path whose `..` or `%2e%2e` segments
  // climb out of it (URL parsers, Node's included, resolve both) is refused before any request.
  const root = new URL(apiScope(base)).pathname;
  const sent = new URL(url).pathname;
  if (sent !== root && !sent.startsWith(`${root}/`))
    throw new UsageError(
      `the path "${path}" leads out of ${root} (to ${sent}); the token is sent only below the base URL's ${API_PREFIX}`,
      'Remove the . or .. segments (plain or percent-encoded) from the path.',
    );
  const trick = pathTrick(p);
  if (trick)
    throw new UsageError(
      `the path "${path}" holds ${trick}, which some servers resolve to another path; the token is sent only below the base URL's ${API_PREFIX}`,
      'Write the path plainly: ASCII, / separators, no . or .. segments, nothing percent-encoded twice.',
    );
  return url;
}

export function apiScope(baseUrl: string): string {
  return `${normaliseBaseUrl(baseUrl)}${API_PREFIX}`;
}

/** Whether a URL leaves `scope`: another origin, a path outside it, or a path `pathTrick` refuses. */
export function outsideScope(url: URL, scope: string): boolean {
  const s = new URL(scope);
  if (url.origin !== s.origin) return true;
  const root = s.pathname.replace(/\/+$/, '');
  if (url.pathname !== root && !url.pathname.startsWith(`${root}/`)) return true;
  return pathTrick(url.pathname.slice(root.length)) !== undefined;
}

/** Each %XX decoded once, as one character per byte: never throws (a bad escape stays as it is). */
const decodeOnce = (text: string) =>
  text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

const TWICE: Record<string, string> = {
  '2e': 'dot',
  '2f': 'slash',
  '5c': 'backslash',
  '3b': 'semicolon',
  '25': 'percent sign',
};

/**
 * Why a path below the base URL could reach another path on some server, or undefined. Servers
 * differ: some decode twice, take `\` or `%2f` as `/`, drop `;…` parameters (Tomcat, Jetty), trim
 * trailing dots (IIS) or fold fullwidth characters (NFKC); the token goes to none of these.
 */
export function pathTrick(path: string): string | undefined {
  if (/\\|%5c/i.test(path)) return 'a backslash (\\ or %5c)';
  if (/%2f/i.test(path)) return 'an encoded slash (%2f)';
  const once = decodeOnce(path);
  if (/[^\x20-\x7e]/.test(once)) return 'a character that is not printable ASCII (raw or percent-encoded)';
  const twice = /%(2e|2f|5c|3b|25)/i.exec(once);
  if (twice) return `a twice-encoded ${TWICE[twice[1]!.toLowerCase()]} (%25${twice[0].slice(1)})`;
  const dots = path.split('/').find(isDotSegment);
  if (dots !== undefined) return `a dot segment (${dots})`;
  return undefined;
}

/** `.`, `..`, `...` in any spelling: percent-encoded, with a `;parameter` (`..;x`, `..%3b`), spaces around. */
export function isDotSegment(segment: string): boolean {
  return /^\.+$/.test((decodeOnce(segment).split(';')[0] ?? '').trim());
}

/** Whether a host is this machine: localhost, 127/8, ::1, 0.0.0.0, :: and IPv4-mapped 127.x. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === 'localhost.' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (h === '0.0.0.0' || h === '::' || /^::ffff:7f[\da-f]{2}:[\da-f]{1,4}$/.test(h)) return true;
  return /^127(\.\d{1,3}){3}$/.test(h);
}
