import { MOCK_TOKENS } from './tokens.js';
import type { Ctx, Reply } from './types.js';

/** Thrown by a step of the pipeline to answer at once. */
export class HttpReply extends Error {
  constructor(readonly reply: Reply) {
    super('reply');
  }
}

const DOCS = 'https://developers.example.invalid/partner-imaging/errors';

const ERROR_TYPES: Record<number, string> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  422: 'validation_error',
  429: 'rate_limit_error',
  500: 'api_error',
};

/** The service's error body; its `type` follows from the status. */
export function envelope(
  status: number,
  code: string,
  message: string,
  requestId: string,
  errors?: string[],
): Reply {
  const type = ERROR_TYPES[status];
  const documentation_url = `${DOCS}#${code}`;
  const body = { error: message, message, type, code, request_id: requestId, documentation_url };
  return { status, body: errors ? { ...body, errors } : body };
}

export const internalError = (requestId: string) =>
  envelope(500, 'internal_error', 'Internal server error', requestId);

export function invalid(c: Ctx, errors: string[], message = 'Validation failed'): Reply {
  return envelope(422, 'unprocessable_entity', message, c.requestId, errors);
}

export function noRoute(method: string, c: Pick<Ctx, 'url' | 'requestId'>): Reply {
  return envelope(404, 'not_found', `No route matches ${method} ${c.url.pathname}`, c.requestId);
}

export function notFound(c: Ctx, what: string): Reply {
  return envelope(404, 'not_found', `${what} not found`, c.requestId);
}

/** Missing, not text, or only white space. */
export const blank = (v: unknown): boolean => typeof v !== 'string' || v.trim() === '';

export function jsonBody(c: Ctx): unknown {
  if (c.body.length === 0) return undefined;
  try {
    return JSON.parse(c.body.toString('utf8'));
  } catch {
    throw new HttpReply({ status: 400, body: { error: 'Request body is not valid JSON' } });
  }
}

/** 403 endpoint_not_enabled for the `mock-disabled` token on the endpoints the spec gates. */
export function gate(c: Ctx, what: string): void {
  if (c.token !== MOCK_TOKENS.disabled) return;
  const message = `The ${what} endpoint is not enabled for this account`;
  throw new HttpReply(envelope(403, 'endpoint_not_enabled', message, c.requestId));
}
