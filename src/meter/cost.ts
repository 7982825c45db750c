import type { Context } from '../context.js';
import { CliError, ExitCode, InterruptedError } from '../errors.js';
import { count, num } from '../util/plural.js';
import { describeView, leftOf, SANDBOX_LIMIT } from './meter.js';

/**
 * The cost check once page 1 tells how many requests are to come: more than is left stops (exit 6,
 * unless --yes); more than a quarter asks on a terminal, else warns (unattended runs that fit go on).
 */
export async function checkCost(ctx: Context, remaining: number | undefined, what: string): Promise<void> {
  const meter = ctx.meter();
  if (!meter || (remaining !== undefined && remaining <= 0)) return;
  let view: ReturnType<typeof meter.view>;
  try {
    view = meter.view();
  } catch {
    return;
  }
  const left = leftOf(view);
  // `what` starts a sentence ("This export"): lower-cased after a "warning: " or "error: " prefix.
  const lower = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);
  if (remaining === undefined) {
    // Page 1 carried no totals (a bare array, no meta): the cost is not known before it is spent.
    const unknown = `${lower(what)} will take as many requests as there are pages, which the server did not say`;
    if (left <= 0 && !ctx.globals.yes)
      throw new CliError(
        `${unknown}, and the meter says the sandbox allowance is used up: stopped before sending more (sandbox allowance: ${describeView(view, ctx.now().getTime())})`,
        ExitCode.limit,
        'Correct the meter if it is wrong (imaging auth allowance --used N), or add --yes to go ahead anyway.',
      );
    if (left * 4 <= SANDBOX_LIMIT)
      ctx.note(`warning: ${unknown}; ≈${num(left)} left in the sandbox allowance (counted on this machine).`);
    return;
  }
  const sentence = `${what} needs ${count(remaining, 'more request')}`;
  const needs = lower(sentence);
  const meterSays = `sandbox allowance: ${describeView(view, ctx.now().getTime())}`;
  if (remaining > left) {
    if (ctx.globals.yes) {
      ctx.note(`warning: ${needs}, more than the ≈${num(left)} left (${meterSays}); going ahead (--yes).`);
      return;
    }
    throw new CliError(
      `${needs}, more than the ≈${num(left)} left in the sandbox allowance: stopped before sending them (${meterSays})`,
      ExitCode.limit,
      'Narrow the run (--param filters), correct the meter if it is wrong (imaging auth allowance --used N), or add --yes to go ahead anyway.',
    );
  }
  if (remaining * 4 <= left || ctx.globals.yes) return;
  const share = (start: string) =>
    `${start}, over a quarter of the ≈${num(left)} left in the sandbox allowance (counted on this machine)`;
  if (!(ctx.io.stdinIsTTY && ctx.io.stderrIsTTY)) {
    ctx.note(`warning: ${share(needs)}; going ahead (no terminal to ask on).`);
    return;
  }
  let ok: boolean;
  try {
    ok = await (await ctx.prompter()).confirm(`${share(sentence)}. Continue?`);
  } catch (err) {
    // Ctrl-C at the question: the prompt line is ended, so the stop message starts a line of its own.
    if (err instanceof InterruptedError && !ctx.signal.aborted) ctx.note('');
    throw err;
  }
  if (!ok)
    throw new CliError(
      `stopped at your answer: the ${count(remaining, 'request')} were not sent`,
      ExitCode.failure,
      'Add --yes to skip the question.',
    );
}

export function remainingAfterFirst(
  totalPages: unknown,
  totalCount: unknown,
  perPage: number | undefined,
): number | undefined {
  if (typeof totalPages === 'number' && Number.isSafeInteger(totalPages) && totalPages >= 1)
    return totalPages - 1;
  if (typeof totalCount === 'number' && Number.isSafeInteger(totalCount) && totalCount >= 0 && perPage)
    return Math.max(1, Math.ceil(totalCount / perPage)) - 1;
  return undefined;
}
