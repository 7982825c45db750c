import { UsageError } from '../errors.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

/** A UUID as the API stores and compares it: lower case (the server is case-sensitive). */
export function normaliseUuid(value: string): string {
  return UUID_RE.test(value) ? value.toLowerCase() : value;
}

/** A UUID, or a comma-separated list of UUIDs (`ids=A,B`), in lower case; anything else unchanged. */
export function normaliseUuids(value: string): string {
  return value.split(',').every((v) => UUID_RE.test(v)) ? value.toLowerCase() : value;
}

/** An http(s) URL given to a flag (webhook targets, forwarding, curl), or a usage error. */
export function requireHttpUrl(flag: string, value: string): URL {
  let u: URL | undefined;
  try {
    u = new URL(value);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    throw new UsageError(`${flag} needs an http(s) URL, not "${value}"`);
  }
  // Node sends to the scheme's default port (80/443) when the URL says :0: refused, not redirected.
  if (u.port === '0') throw new UsageError(`${flag}: port 0 is not a port anything listens on ("${value}")`);
  return u;
}

/** The longest argument taken (a reference, a code, a name, a search text, a path): 4 KiB. */
export const MAX_ARG_BYTES = 4096;
