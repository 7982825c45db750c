import type { IncomingHttpHeaders } from 'node:http';
import type { ApiErrorDetails } from '../errors.js';
import { shownRequestId } from './trace.js';

type ParsedDetails = Omit<ApiErrorDetails, 'method' | 'url'>;

/** Makes server text safe to show: the one sanitiser, handed in so api/ knows nothing of output/. */
export type Clean = (text: string) => string;

/** Reads an error answer: the envelope, a bare `{ error }`, a proxy's HTML, truncated JSON, or nothing. */
export function parseErrorBody(
  status: number,
  headers: IncomingHttpHeaders,
  raw: Buffer,
  clean: Clean,
): ParsedDetails {
  const sanitise = (text: string) => oneLine(clean, text);
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const details: ParsedDetails = { status, requestId: shownRequestId(header('x-request-id')), headers };
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
  // An error answer keeps its status's exit code however strange its `errors` are.
  const lines: string[] = [];
  if (Array.isArray(b.errors)) {
    for (const e of b.errors.slice(0, MAX_ERROR_ITEMS + 1)) lines.push(sanitise(compactJson(e)));
  } else if (typeof b.errors === 'object' && b.errors !== null) {
    for (const [field, msgs] of Object.entries(b.errors as Record<string, unknown>)) {
      for (const m of (Array.isArray(msgs) ? msgs : [msgs]).slice(0, MAX_ERROR_ITEMS + 1))
        lines.push(sanitise(`${field} ${compactJson(m)}`));
      if (lines.length > MAX_ERROR_ITEMS) break;
    }
  } else if (b.errors !== undefined && b.errors !== null) {
    lines.push(sanitise(compactJson(b.errors)));
  }
  if (lines.length > 0) {
    details.errors = lines.slice(0, MAX_ERROR_ITEMS);
    if (lines.length > MAX_ERROR_ITEMS) details.errors.push('(further errors left out)');
  }
  details.requestId = shownRequestId(str(b.request_id)) ?? details.requestId;
  details.documentationUrl = str(b.documentation_url);
  if (!details.message) details.bodyNote = `HTTP ${status} with no error message`;
  return details;
}

const MAX_ERROR_ITEMS = 20;
const MAX_ERROR_ITEM_LENGTH = 300;
const MAX_ITEM_DEPTH = 8;

/**
 * An `errors` item as one short line, cut at a depth and a length: never JSON.stringify on the
 * whole value, since a hostile answer nests deeper than the stack.
 */
function compactJson(value: unknown, maxLength = MAX_ERROR_ITEM_LENGTH): string {
  if (typeof value === 'string') return cut(value, maxLength);
  let out = '';
  const full = () => out.length > maxLength;
  const walk = (v: unknown, depth: number): void => {
    if (full()) return;
    if (v === null || typeof v !== 'object') {
      out +=
        typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? JSON.stringify(v) : 'null';
      return;
    }
    const isList = Array.isArray(v);
    if (depth >= MAX_ITEM_DEPTH) {
      out += isList ? '[…]' : '{…}';
      return;
    }
    out += isList ? '[' : '{';
    let first = true;
    for (const [k, child] of isList ? (v as unknown[]).entries() : Object.entries(v)) {
      if (full()) return;
      if (!first) out += ',';
      first = false;
      if (!isList) out += `${JSON.stringify(k)}:`;
      walk(child, depth + 1);
    }
    out += isList ? ']' : '}';
  };
  walk(value, 0);
  return cut(out, maxLength);
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

function oneLine(clean: Clean, text: string): string {
  return clean(text).replace(/\s+/g, ' ').trim();
}
