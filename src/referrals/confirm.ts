import type { ApiClient } from '../api/client.js';
import type { Operation } from '../api/endpoints/operations.js';
import type { EnvironmentName } from '../config/environments.js';
import { operationRoute, type ResolvedOperation } from '../config/operations.js';
import type { Context } from '../context.js';
import { ExitCode, UsageError } from '../errors.js';
import type { OutputFormat } from '../output/format.js';
import { showRequest } from './request-view.js';

/** Whether a write is asked about first: to production (by name or by base URL), without --yes. */
export function asksFirst(ctx: Context): boolean {
  return !ctx.globals.yes && ctx.targetsProduction();
}

/**
 * Before any request: a production write that will have to ask needs a terminal to ask on (standard
 * input that carries the input cannot answer too). `what` names the write: "updating a referral".
 */
export function checkAskable(ctx: Context, what: string, stdinUsed = false): void {
  if (!asksFirst(ctx)) return;
  if (ctx.io.stdinIsTTY && !stdinUsed) return;
  throw new UsageError(
    `${what} in production needs confirmation`,
    stdinUsed
      ? 'The input came on standard input, so it cannot also answer a question: add --yes.'
      : 'There is no terminal to ask on: add --yes to confirm.',
  );
}

/** Asks on the terminal when the write needs it; false (and "Nothing was sent.") when the answer is no. */
export async function confirmWrite(ctx: Context, question: string): Promise<boolean> {
  if (!asksFirst(ctx)) return true;
  const ok = await (await ctx.prompter()).confirm(`${question} in PRODUCTION (${ctx.api().baseUrl})?`);
  if (!ok) ctx.note('Nothing was sent.');
  return ok;
}

/**
 * The start of a write through an unpublished operation, before any request: a production write must be
 * askable (unless a dry run), and the stored path of `op` must be usable. `what` names the write.
 */
export function beginWrite(
  ctx: Context,
  op: Operation,
  what: string,
  opts: { dryRun?: boolean | undefined; stdinUsed?: boolean },
): { env: EnvironmentName; client: ApiClient } {
  if (!opts.dryRun) checkAskable(ctx, what, opts.stdinUsed);
  const env = ctx.environment().value;
  const client = ctx.api();
  operationRoute(ctx.config, env, op, '-');
  return { env, client };
}

/**
 * A write about to go: --dry-run shows it instead; in production it is shown on stderr and asked about.
 * The exit code to stop with, or undefined to send it.
 */
export async function approveWrite(
  ctx: Context,
  write: { format: OutputFormat; route: ResolvedOperation; body: unknown; dryRun?: boolean | undefined },
  question: string,
): Promise<number | undefined> {
  const { format, route, body } = write;
  if (write.dryRun) return showRequest(ctx, format, route, body, true);
  if (asksFirst(ctx)) showRequest(ctx, 'table', route, body, false);
  return (await confirmWrite(ctx, question)) ? undefined : ExitCode.failure;
}
