import type { Context } from '../context.js';
import { CliError, ExitCode, InterruptedError } from '../errors.js';
import { count, num } from '../util/plural.js';
import { describeView, leftOf, SANDBOX_LIMIT } from './meter.js';

/**
 * The cost check once page 1 tells how many requests are to come: more than is left stops (exit 6,
 * unless --yes); more than a quarter asks on a terminal, else warns (unattended runs that fit go on).
 * `asks: false`: only the stop (the caller asks its own question). True when it asked (and got yes).
 */
export async function checkCost(
  ctx: Context,
  remaining: number | undefined,
  what: string,
  opts: { asks?: boolean } = {},
): Promise<boolean> {
  const meter = ctx.meter();
  if (!meter || (remaining !== undefined && remaining <= 0)) return false;
  let view: ReturnType<typeof meter.view>;
  try {
    view = meter.view();
  } catch {
    return false;
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
    return false;
  }
  const sentence = `${what} needs ${count(remaining, 'more request')}`;
  const needs = lower(sentence);
  const meterSays = `sandbox allowance: ${describeView(view, ctx.now().getTime())}`;
  if (remaining > left) {
    if (ctx.globals.yes) {
      ctx.note(`warning: ${needs}, more than the ≈${num(left)} left (${meterSays}); going ahead (--yes).`);
      return false;
    }
    throw new CliError(
      `${needs}, more than the ≈${num(left)} left in the sandbox allowance: stopped before sending them (${meterSays})`,
      ExitCode.limit,
      'Narrow the run (--param filters), correct the meter if it is wrong (imaging auth allowance --used N), or add --yes to go ahead anyway.',
    );
  }
  if (remaining * 4 <= left || ctx.globals.yes || opts.asks === false) return false;
  const share = (start: string) =>
    `${start}, over a quarter of the ≈${num(left)} left in the sandbox allowance (counted on this machine)`;
  if (!(ctx.io.stdinIsTTY && ctx.io.stderrIsTTY)) {
    ctx.note(`warning: ${share(needs)}; going ahead (no terminal to ask on).`);
    return false;
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
  return true;
}

/** Pages a sandbox walk of unknown length reads before it asks to go on. */
export const UNKNOWN_WALK_ASKS_AFTER = 10;

/**
 * The sandbox's watch between the pages of walks whose length the server did not say (one command's
 * walks share it): after 10 pages it asks once before going on, as such a server may page forever
 * (a terminal; --yes goes on; else exit 6). And no walk sends another page once the meter says the
 * allowance is used up, unless it said so before the command's first walk and --yes went ahead.
 */
export class WalkGuard {
  private approved: Promise<void> | undefined;
  private readonly usedUpAtStart: boolean;

  constructor(
    private readonly ctx: Context,
    /** Starts a sentence: "This search". */
    private readonly what: string,
    /** What is walked: "the referral list". */
    private readonly list: string,
    private readonly narrow: string,
  ) {
    const left = this.left();
    this.usedUpAtStart = left !== undefined && left <= 0;
  }

  /** Whether the guard has anything to do: only in the sandbox. */
  get active(): boolean {
    return this.ctx.meter() !== undefined;
  }

  /** What the walk will do once it passes 10 pages with no total, for the note before it. */
  get onUnknown(): string {
    if (this.ctx.globals.yes) return 'as many requests as there are pages';
    return this.ctx.io.stdinIsTTY && this.ctx.io.stderrIsTTY
      ? `asking before it goes past ${num(UNKNOWN_WALK_ASKS_AFTER)} pages, as the server does not say how many there are`
      : `stopping after ${num(UNKNOWN_WALK_ASKS_AFTER)} pages, as the server does not say how many there are (--yes goes on)`;
  }

  /** Before the page after the `pages` read so far; `known`: the server said how many there are. */
  async beforeNext(pages: number, known: boolean): Promise<void> {
    if (!this.active) return;
    const left = this.left();
    if (left !== undefined && left <= 0 && !(this.usedUpAtStart && this.ctx.globals.yes))
      throw new CliError(
        `the meter says the sandbox allowance is used up: ${lower(this.what)} stopped after ${count(pages, 'page')} of ${this.list}, before sending more (${this.meterSays()})`,
        ExitCode.limit,
        'Correct the meter if it is wrong (imaging auth allowance --used N), or add --yes to go ahead anyway.',
      );
    if (known || pages < UNKNOWN_WALK_ASKS_AFTER || this.ctx.globals.yes) return;
    this.approved ??= this.ask(pages);
    await this.approved;
  }

  /**
   * Page 1 said the walk has `pages` pages: over 10, without --yes, a terminal is asked (no: exit 1)
   * and with none to ask on it stops here before the rest are sent (exit 6, the allowance's code).
   */
  async confirmPages(pages: number): Promise<void> {
    if (!this.active || pages <= UNKNOWN_WALK_ASKS_AFTER || this.ctx.globals.yes) return;
    const reads = `${lower(this.what)} would read ${count(pages, 'page')} of ${this.list}, ${count(pages - 1, 'more request')} from the sandbox allowance`;
    if (!(this.ctx.io.stdinIsTTY && this.ctx.io.stderrIsTTY))
      throw new CliError(
        `${reads}, and there is no terminal to ask on: stopped before sending them (${this.meterSays()})`,
        ExitCode.limit,
        `${this.narrow}, or add --yes to go ahead.`,
      );
    await this.confirm(
      `${upper(reads)} (${this.meterSays()}). Continue?`,
      `stopped at your answer after page 1 of ${this.list}: the ${count(pages - 1, 'request')} were not sent`,
    );
  }

  /** Page `announced`, the last page 1 announced, says there are more: not followed (one budget). */
  pastAnnounced(announced: number): never {
    throw new CliError(
      `${this.list} said it has ${count(announced, 'page')}, but page ${num(announced)} says there are more: ${lower(this.what)} stopped after ${count(announced, 'page')}, before sending more, as each page is a request from the sandbox allowance`,
      ExitCode.failure,
      `${this.narrow}, or report the server answer with --verbose.`,
    );
  }

  private async ask(pages: number): Promise<void> {
    const left = this.left();
    const read = `${lower(this.what)} has read ${count(pages, 'page')} of ${this.list}, which does not say how many pages there are`;
    if (!(this.ctx.io.stdinIsTTY && this.ctx.io.stderrIsTTY))
      throw new CliError(
        `${read}: stopped before sending more, as each page is a request from the sandbox allowance (${this.meterSays()})`,
        ExitCode.limit,
        `${this.narrow}, or add --yes to read every page.`,
      );
    const cost =
      left === undefined
        ? 'each page more is a request from the sandbox allowance'
        : `each page more is a request from the ≈${num(left)} left in the sandbox allowance (counted on this machine)`;
    await this.confirm(
      `${upper(read)}; ${cost}. Continue?`,
      `stopped at your answer after ${count(pages, 'page')} of ${this.list}`,
    );
  }

  /** The terminal's yes or no; no is exit 1 with `stopped`. */
  private async confirm(question: string, stopped: string): Promise<void> {
    let ok: boolean;
    try {
      ok = await (await this.ctx.prompter()).confirm(question);
    } catch (err) {
      if (err instanceof InterruptedError && !this.ctx.signal.aborted) this.ctx.note('');
      throw err;
    }
    if (!ok)
      throw new CliError(stopped, ExitCode.failure, `${this.narrow}, or add --yes to skip the question.`);
  }

  private left(): number | undefined {
    try {
      const view = this.ctx.meter()?.view();
      return view && !view.unreadable ? leftOf(view) : undefined;
    } catch {
      return undefined;
    }
  }

  private meterSays(): string {
    try {
      const view = this.ctx.meter()?.view();
      if (view) return `sandbox allowance: ${describeView(view, this.ctx.now().getTime())}`;
    } catch {}
    return 'sandbox allowance: not known';
  }
}

const lower = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);
const upper = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

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
