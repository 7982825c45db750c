import { UsageError } from '../../errors.js';
import type { ApiClient, ApiResponse } from '../client.js';
import { isDotSegment } from '../url.js';

/**
 * A referral's payments and notifications: the spec names these reads but not their paths, so each
 * environment may set them (`imaging config set path.payments …`).
 */
export type RecordKind = 'payments' | 'notifications';

export const RECORD_KINDS: readonly RecordKind[] = ['payments', 'notifications'];

export const DEFAULT_RECORD_PATHS: Readonly<Record<RecordKind, string>> = {
  payments: '/api/v2/referrals/{id}/payments',
  notifications: '/api/v2/referrals/{id}/notifications',
};

/** A configured path: an API path (never a URL), one `{id}`, plain characters, no `..`, query or fragment. */
export function checkRecordPath(kind: RecordKind, value: unknown): string {
  if (typeof value !== 'string')
    throw new UsageError(
      `path.${kind} is ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : `a ${typeof value}`}, not text`,
      `Give the API path with {id} where the referral id goes, e.g. ${DEFAULT_RECORD_PATHS[kind]}`,
    );
  const v = value.trim();
  const bad = (why: string) =>
    new UsageError(
      `path.${kind}: "${value}" ${why}`,
      `Give the API path with {id} where the referral id goes, e.g. ${DEFAULT_RECORD_PATHS[kind]}`,
    );
  if (/^[a-z][a-z0-9+.-]*:/i.test(v) || v.startsWith('//'))
    throw bad("is a URL; give the path only (the base URL is the environment's)");
  if (!v.startsWith('/')) throw bad('must start with /');
  if (v.split('{id}').length !== 2) throw bad('must hold {id} exactly once');
  if (!/^[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(v.replace('{id}', '')))
    throw bad('holds a character that is not allowed in a path (a query, a fragment or a space)');
  // A server may read %2e as a dot and %2f / %5c as a slash: `%2e%2e` would climb out of the base
  // URL's path with the token.
  if (/%(2e|2f|5c|25)/i.test(v))
    throw bad('must not hold a percent-encoded dot, slash, backslash or percent (%2e, %2f, %5c, %25)');
  if (/%(?![0-9a-f]{2})/i.test(v)) throw bad('holds a % that is not followed by two hex digits');
  // Tomcat and Jetty drop a `;…` path parameter before resolving, so `..;` and `..;x` climb too.
  if (v.split('/').some((seg) => isDotSegment(seg)))
    throw bad(
      'must not hold . or .. segments (nor ..; or .;x, which servers that read ;parameters take as . and ..)',
    );
  if (v.includes('//')) throw bad('must not hold an empty segment (//)');
  return v;
}

export function recordPath(kind: RecordKind, id: string, configured?: string): string {
  const template = configured ? checkRecordPath(kind, configured) : DEFAULT_RECORD_PATHS[kind];
  return template.replace('{id}', encodeURIComponent(id));
}

export function getReferralRecords(client: ApiClient, path: string): Promise<ApiResponse<unknown>> {
  return client.request<unknown>({ path });
}
