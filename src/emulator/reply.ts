import { MOCK_TOKENS } from './tokens.js';
import type { Ctx, Reply } from './types.js';

export class HttpReply extends Error {
  constructor(readonly reply: Reply) {
    super('reply');
  }
}

const DOCS = 'https://developers.example.invalid/partner-imaging/errors';

export function envelope(
  status: number,
  type: string,
  code: string,
  message: string,
  requestId: string,
  errors?: string[],
): Reply {
  return {
    status,
    body: {
      error: message,
      message,
      type,
      code,
      request_id: requestId,
      documentation_url: `${DOCS}#${code}`,
      ...(errors ? { errors } : {}),
    },
  };
}

export function invalid(c: Ctx, errors: string[]): Reply {
  return envelope(422, 'validation_error', 'unprocessable_entity', 'Validation failed', c.requestId, errors);
}

export function noRoute(method: string, c: Pick<Ctx, 'url' | 'requestId'>): Reply {
  return envelope(
    404,
    'not_found_error',
    'not_found',
    `No route matches ${method} ${c.url.pathname}`,
    c.requestId,
  );
}

export function notFound(c: Ctx, what: string): Reply {
  return envelope(404, 'not_found_error', 'not_found', `${what} not found`, c.requestId);
}

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
  if (c.token === MOCK_TOKENS.disabled) {
    throw new HttpReply(
      envelope(
        403,
        'permission_error',
        'endpoint_not_enabled',
        `The ${what} endpoint is not enabled for this account`,
        c.requestId,
      ),
    );
  }
}
