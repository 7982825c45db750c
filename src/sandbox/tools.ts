import type { ApiResponse } from '../api/client.js';
import type { Operation } from '../api/endpoints/operations.js';
import { apiUrl } from '../api/url.js';
import {
  type NotFoundReason,
  operationRoute,
  type ResolvedOperation,
  sendOperation,
} from '../config/operations.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { clean } from '../output/text.js';
import { write, writeJson } from '../output/write.js';

// The sandbox's own tools (status advancement, fixtures, a test webhook): sandbox and local only, at the
// per-environment paths of `path.sandbox_*` (unpublished: the defaults are guesses, the bodies too).

/** Production is refused before anything is read or sent: these operations exist only in the sandbox. */
export function sandboxEnvironment(ctx: Context, verb: string): 'sandbox' | 'local' {
  const env = ctx.environment().value;
  if ((env === 'sandbox' || env === 'local') && ctx.targetsProduction())
    throw new UsageError(
      `imaging sandbox ${verb}: the ${env} base URL ${ctx.baseUrl(env).value} is production's; refused`,
      "These operations exist only in the sandbox: give the sandbox's base URL, or --env local against imaging mock.",
    );
  if (env === 'sandbox' || env === 'local') return env;
  throw new UsageError(
    `imaging sandbox ${verb} works on the sandbox and local environments only, not ${env}`,
    'These operations exist only in the sandbox: run it with --env sandbox, or --env local against imaging mock.',
  );
}

/** The route of `op` (the stored path.<op>, checked, or the default): before any request. */
export function sandboxRoute(ctx: Context, env: string, op: Operation, id?: string): ResolvedOperation {
  return operationRoute(ctx.config, env as 'sandbox' | 'local', op, id);
}

/**
 * Sends the operation, or with --dry-run shows it: the request line on standard error, the body on
 * standard output (JSON, as it would go), and sends nothing. Undefined when nothing was sent.
 */
export async function sendSandbox<T>(
  ctx: Context,
  route: ResolvedOperation,
  body: Record<string, unknown>,
  opts: { dryRun: boolean; alsoMissing?: NotFoundReason },
): Promise<ApiResponse<T> | undefined> {
  if (opts.dryRun) {
    // Where it would go needs the base URL only: a dry run needs no token.
    const url = apiUrl(ctx.requireBaseUrl(route.env), route.path);
    writeJson(ctx.sink(), body);
    ctx.note(`Nothing was sent (--dry-run): this is the body of ${route.method} ${clean(url)}.`);
    return undefined;
  }
  return sendOperation<T>(ctx.api(), route, body, opts.alsoMissing);
}

/** The answer as the API sent it (its shape is not published): JSON, through the one writer. */
export async function writeAnswer(ctx: Context, res: ApiResponse<unknown>): Promise<void> {
  if (res.data === undefined || res.data === null || res.raw.length === 0) return;
  await write({ one: res.data }, { sink: ctx.sink(), format: 'json' });
}
