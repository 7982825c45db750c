import { UsageError } from '../../errors.js';
import { isDotSegment, pathTrick } from '../url.js';

/**
 * The operations the spec names without publishing their method or path. Each environment may set its own
 * (`imaging config set path.<operation> '[METHOD] /api/v2/…'`); these are the defaults, guesses all.
 */
export type Operation =
  | 'payments'
  | 'notifications'
  | 'referral_update'
  | 'auto_book'
  | 'sandbox_advance'
  | 'sandbox_fixture'
  | 'sandbox_test_webhook';

export interface OperationSpec {
  /** The method sent when the configured value names none. */
  method: HttpMethod;
  path: string;
  /** Whether the path holds `{id}` (exactly once); the others hold none. */
  id: boolean;
  /** What the id is of, for messages ("the referral id"). */
  idOf?: string;
  /** The spec's name of the operation ("the referral update"). */
  name: string;
}

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof METHODS)[number];

export const OPERATIONS: Readonly<Record<Operation, OperationSpec>> = {
  payments: {
    method: 'GET',
    path: '/api/v2/referrals/{id}/payments',
    id: true,
    idOf: 'referral',
    name: 'the payment read',
  },
  notifications: {
    method: 'GET',
    path: '/api/v2/referrals/{id}/notifications',
    id: true,
    idOf: 'referral',
    name: 'the notification read',
  },
  referral_update: {
    method: 'PATCH',
    path: '/api/v2/referrals/{id}',
    id: true,
    idOf: 'referral',
    name: 'the referral update',
  },
  auto_book: {
    method: 'POST',
    path: '/api/v2/referrals/{id}/auto_book',
    id: true,
    idOf: 'referral',
    name: 'the auto-book submission',
  },
  sandbox_advance: {
    method: 'POST',
    path: '/api/v2/sandbox/visits/{id}/advance',
    id: true,
    idOf: 'visit',
    name: "the sandbox's status advancement",
  },
  sandbox_fixture: {
    method: 'POST',
    path: '/api/v2/sandbox/fixtures',
    id: false,
    name: "the sandbox's fixture",
  },
  sandbox_test_webhook: {
    method: 'POST',
    path: '/api/v2/sandbox/test_webhook',
    id: false,
    name: "the sandbox's test webhook",
  },
};

export const OPERATION_NAMES = Object.keys(OPERATIONS) as Operation[];

export const isOperation = (name: string): name is Operation => Object.hasOwn(OPERATIONS, name);

/** A configured or default route: the method to send and the path template. */
export interface OperationRoute {
  method: HttpMethod;
  /** With `{id}` where the operation takes one. */
  template: string;
}

/** The example a message gives for `op`: its default, as `config set` takes it. */
export const exampleOf = (op: Operation): string => `${OPERATIONS[op].method} ${OPERATIONS[op].path}`;

const describe = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'a list'
      : typeof value === 'object'
        ? 'an object'
        : `a ${typeof value}`;

/**
 * A configured value, `[METHOD] /api/v2/…`: an API path (never a URL), `{id}` exactly once where the
 * operation takes an id (never otherwise), plain characters, no `..` (plain, encoded or with `;…`), no
 * query or fragment. Throws a UsageError that names the key; a bare path takes the operation's method.
 */
export function parseOperationValue(op: Operation, value: unknown): OperationRoute {
  const spec = OPERATIONS[op];
  const fix = spec.id
    ? `Give the API path with {id} where the ${spec.idOf} id goes, the method first if it is not ${spec.method}: e.g. ${spec.path} or '${exampleOf(op)}'`
    : `Give the API path, the method first if it is not ${spec.method}: e.g. ${spec.path} or '${exampleOf(op)}'`;
  if (typeof value !== 'string') throw new UsageError(`path.${op} is ${describe(value)}, not text`, fix);
  const bad = (why: string) => new UsageError(`path.${op}: "${value}" ${why}`, fix);
  let v = value.trim();
  let method: HttpMethod = spec.method;
  const m = /^([A-Za-z]+)\s+(\S.*)$/.exec(v);
  if (m) {
    const given = m[1]!.toUpperCase();
    if (!(METHODS as readonly string[]).includes(given))
      throw bad(`names the method ${m[1]}, which is not one of ${METHODS.join(', ')}`);
    method = given as HttpMethod;
    v = m[2]!.trim();
  }
  return { method, template: checkPath(v, spec, bad) };
}

function checkPath(v: string, spec: OperationSpec, bad: (why: string) => UsageError): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(v) || v.startsWith('//'))
    throw bad("is a URL; give the path only (the base URL is the environment's)");
  if (!v.startsWith('/')) throw bad('must start with /');
  const ids = v.split('{id}').length - 1;
  if (spec.id && ids !== 1) throw bad('must hold {id} exactly once');
  if (!spec.id && ids !== 0) throw bad('must not hold {id}: this operation takes no id');
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
  // The rule every request is sent under: refused here too, not first when the path is used.
  const trick = pathTrick(v.replace('{id}', 'id'));
  if (trick) throw bad(`holds ${trick}, which some servers resolve to another path`);
  return v;
}

/** The value `config set` stores: the path alone when the method is the operation's own. */
export function storedForm(op: Operation, route: OperationRoute): string {
  return route.method === OPERATIONS[op].method ? route.template : `${route.method} ${route.template}`;
}

/** The path to send: the template with the id in place (encoded: it can never add a segment). */
export function fillPath(template: string, id?: string): string {
  return id === undefined ? template : template.replace('{id}', encodeURIComponent(id));
}
