import type { IncomingHttpHeaders } from 'node:http';
import type { ApiErrorDetails } from '../errors.js';
import { clean } from '../output/text.js';

type ParsedDetails = Omit<ApiErrorDetails, 'method' | 'url'>;

/**
 * Reads an error answer: the spec's envelope, a bare `{ error }` (400 on /cpt_codes, some 403s),
 * an HTML page from a proxy, truncated JSON, or nothing at all.
 */
export function parseErrorBody(status: number, headers: IncomingHttpHeaders, raw: Buffer): ParsedDetails {
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const details: ParsedDetails = { status, requestId: header('x-request-id') };
  const retryAfter = parseRetryAfter(header('retry-after'));
  if (retryAfter !== undefined) details.retryAfterSeconds = retryAfter;
  const text = raw.toString('utf8');
  if (text.trim() === '') {
    details.bodyNote = `empty response body (HTTP ${status})`;
    return details;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const type = header('content-type') ?? '';
    if (/html/i.test(type) || /^\s*</.test(text)) {
      const title = /<title[^>]*>([^<]{1,200})<\/title>/i.exec(text)?.[1]?.trim();
      details.bodyNote = `the server answered HTTP ${status} with an HTML page${title ? ` ("${sanitise(title)}")` : ''}, probably from a proxy or gateway rather than the API`;
    } else if (/^\s*[[{]/.test(text)) {
      details.bodyNote = `the error body is truncated or malformed JSON (HTTP ${status}, ${raw.length} bytes)`;
    } else {
      details.bodyNote = `HTTP ${status}: ${sanitise(text.slice(0, 200))}`;
    }
    return details;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    details.bodyNote = `HTTP ${status} with an unexpected body`;
    return details;
  }
  const b = body as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? sanitise(v) : undefined);
  details.code = str(b.code);
  details.type = str(b.type);
  details.message = str(b.message) ?? str(b.error);
  if (str(b.message) === undefined && typeof b.error === 'object' && b.error !== null) {
    details.message = str((b.error as Record<string, unknown>).message);
  }
  if (Array.isArray(b.errors)) {
    details.errors = b.errors.map((e) => (typeof e === 'string' ? sanitise(e) : sanitise(JSON.stringify(e))));
  } else if (typeof b.errors === 'object' && b.errors !== null) {
    // Rails-style { field: [messages] }: not the documented shape, but common enough to read.
    details.errors = Object.entries(b.errors as Record<string, unknown>).flatMap(([field, msgs]) =>
      (Array.isArray(msgs) ? msgs : [msgs]).map((m) => sanitise(`${field} ${String(m)}`)),
    );
  }
  details.requestId = str(b.request_id) ?? details.requestId;
  details.documentationUrl = str(b.documentation_url);
  if (!details.message) details.bodyNote = `HTTP ${status} with no error message`;
  return details;
}

export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * Server text kept in an error's details: escaped by the one sanitiser (output/text.ts) and put
 * on one line, so a message stays safe wherever it is shown (the error block cleans it again).
 */
export function sanitise(text: string): string {
  return clean(text).replace(/\s+/g, ' ').trim();
}
