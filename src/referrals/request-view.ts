import type { ResolvedOperation } from '../config/operations.js';
import type { Context } from '../context.js';
import type { OutputFormat } from '../output/format.js';
import { writeJson } from '../output/write.js';

/**
 * A write's request as it would go: on stdout for --dry-run (an object with --json), on stderr before a
 * production question. The body is the user's own input, shown through the sanitiser all the same.
 */
export function showRequest(
  ctx: Context,
  format: OutputFormat,
  route: ResolvedOperation,
  body: unknown,
  dryRun: boolean,
): number {
  const url = ctx.api().url(route.path);
  if (dryRun && format === 'json') {
    writeJson(ctx.sink(), { method: route.method, url, body });
  } else {
    const out = dryRun ? ctx.out : ctx.err;
    out.line(`${route.method} ${url}`);
    out.write(`${JSON.stringify(body, null, 2)}\n`);
  }
  if (dryRun)
    ctx.note(
      `Dry run: nothing was changed (path.${route.op}: ${route.configured ? 'set for this environment' : 'the default, a guess'}).`,
    );
  return 0;
}
