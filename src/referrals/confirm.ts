import type { Context } from '../context.js';
import { UsageError } from '../errors.js';

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
