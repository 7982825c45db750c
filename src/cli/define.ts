import type { Context } from '../context.js';
import type { FieldSet } from '../output/fields.js';
import { DEFAULT_FORMATS, type OutputFormat } from '../output/format.js';
import type { ArgSpec, InferArgs, InferOptions, OptionSpecs } from './options.js';

/** One command: its words, arguments and options beside the handler that uses them. */
interface CommandDefinition<
  O extends OptionSpecs = OptionSpecs,
  A extends readonly ArgSpec[] = readonly ArgSpec[],
> {
  /** The words that invoke it: ['referrals', 'list'] or ['cpt']. */
  readonly path: readonly string[];
  /** What the command's help says after the registry's one-line summary, when it needs more. */
  readonly description?: string;
  readonly args?: A;
  readonly options?: O;
  readonly examples?: readonly string[];
  /** The fields `--fields` picks from (help lists them); a command without takes no --fields. */
  readonly fields?: readonly FieldSet[];
  /** Whether it can write CSV (so takes --bom and --no-formula-guard). */
  readonly csv?: boolean;
  /** The output formats it takes, when not every one (`ctx.format()` refuses the others). */
  readonly formats?: readonly OutputFormat[];
  run(
    ctx: Context,
    args: InferArgs<A>,
    opts: InferOptions<O>,
  ): Promise<number | undefined> | number | undefined;
}

export function defineCommand<
  const O extends OptionSpecs = Record<string, never>,
  const A extends readonly ArgSpec[] = [],
>(def: CommandDefinition<O, A>): CommandDefinition<O, A> {
  return def;
}

/** A definition of any command, as the program and the tests handle them. */
// biome-ignore lint/suspicious/noExplicitAny: the handler's own types are checked where it is defined
export type AnyCommand = CommandDefinition<any, any>;

/** Whether a command can write CSV (and so takes --bom and --no-formula-guard). */
export const writesCsv = (def: AnyCommand): boolean =>
  (def.csv ?? def.fields !== undefined) && (def.formats ?? DEFAULT_FORMATS).includes('csv');
