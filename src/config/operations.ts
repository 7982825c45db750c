import type { ApiClient, ApiResponse } from '../api/client.js';
import {
  exampleOf,
  fillPath,
  type HttpMethod,
  OPERATIONS,
  type Operation,
  parseOperationValue,
} from '../api/endpoints/operations.js';
import { ApiError, UsageError } from '../errors.js';
import { type EnvironmentName, envArg } from './environments.js';
import type { ConfigStore } from './store.js';

/** Where an unpublished operation goes on one environment: its method and path, and whence they came. */
export interface ResolvedOperation {
  op: Operation;
  env: EnvironmentName;
  method: HttpMethod;
  /** The template, `{id}` in place. */
  template: string;
  /** The path to send: the template with the id filled in (encoded). */
  path: string;
  /** The stored value, when `path.<op>` is set for the environment; undefined: the default. */
  configured: string | undefined;
}

/**
 * The one way to find an unpublished operation's method and path: `path.<op>` of `env` when set (checked
 * again: a hand edit may have made it unsafe), else the operation's default. `id` fills `{id}`.
 */
export function operationRoute(
  config: ConfigStore,
  env: EnvironmentName,
  op: Operation,
  id?: string,
): ResolvedOperation {
  const configured: unknown = config.environment(env).paths?.[op];
  let route = { method: OPERATIONS[op].method, template: OPERATIONS[op].path };
  if (configured !== undefined) {
    try {
      route = parseOperationValue(op, configured);
    } catch (err) {
      throw new UsageError(
        `the stored path.${op} of ${env} is not usable: ${(err as Error).message}`,
        `Set it again: ${setCommand(op, env)} (or imaging config unset path.${op}${envArg(env)} for the default)`,
      );
    }
  }
  if (OPERATIONS[op].id && id === undefined) throw new Error(`path.${op} needs an id`);
  return {
    op,
    env,
    method: route.method,
    template: route.template,
    path: fillPath(route.template, OPERATIONS[op].id ? id : undefined),
    configured: typeof configured === 'string' ? configured : undefined,
  };
}

/** The command that sets `path.<op>` for `env`, its value an example to replace. */
export function setCommand(op: Operation, env: EnvironmentName): string {
  const spec = OPERATIONS[op];
  return `imaging config set path.${op} '${spec.method} ${spec.id ? '/api/v2/…/{id}/…' : '/api/v2/…'}'${envArg(env)}`;
}

/**
 * The other reason a 404 may have: what may not exist ("there is no referral X on sandbox"), or, as
 * `{ found }`, what was read just before (then the path is the likely fault).
 */
export type NotFoundReason = string | { found: string };

/** What a 404 or 405 from an operation's path may mean, and which key changes it. */
export function unpublishedPathHint(r: ResolvedOperation, alsoMissing?: NotFoundReason): string {
  const spec = OPERATIONS[r.op];
  const where = r.configured
    ? `path.${r.op} is set to ${r.method} ${r.template} for ${r.env}; if this server keeps ${spec.name} elsewhere, set it with: ${setCommand(r.op, r.env)}`
    : `the path of ${spec.name} is not published (the default, ${exampleOf(r.op)}, is a guess); set it with: ${setCommand(r.op, r.env)}`;
  if (typeof alsoMissing === 'object')
    return `${alsoMissing.found} was read just before, so the path is likely wrong: ${where}`;
  if (alsoMissing) return `Either ${alsoMissing}, or ${where}`;
  // A key keeps its case ("path.auto_book is set to …"); a sentence starts with a capital.
  return where.startsWith('path.') ? where : `${where[0]!.toUpperCase()}${where.slice(1)}`;
}

/**
 * Sends one unpublished operation (`json` as its body, when given). A 404 or 405 says which key to set;
 * `alsoMissing` words the other reason for a 404 ("there is no referral X on sandbox"), when there is one.
 */
export async function sendOperation<T>(
  client: ApiClient,
  r: ResolvedOperation,
  json?: unknown,
  alsoMissing?: NotFoundReason,
): Promise<ApiResponse<T>> {
  try {
    return await client.request<T>({
      method: r.method,
      path: r.path,
      ...(json === undefined ? {} : { json }),
    });
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 405))
      throw new ApiError(err.details, unpublishedPathHint(r, err.status === 404 ? alsoMissing : undefined));
    throw err;
  }
}
