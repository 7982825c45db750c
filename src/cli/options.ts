import { num } from '../util/plural.js';

/** Option specs: data that the parser (program.ts), the help and, later, shell completion read. */

type OptionKind =
  | 'flag'
  | 'negate'
  | 'int'
  | 'port'
  | 'text'
  | 'file'
  | 'folder'
  | 'choice'
  | 'list'
  | 'pairs';

export interface OptionSpec<T = unknown, Always extends boolean = boolean> {
  readonly kind: OptionKind;
  /** As commander reads them: '-o, --output <file>', '--all', '--no-color'. */
  readonly flags: string;
  readonly description: string;
  /** Turns one given value (and the earlier ones, for a repeatable option) into the option's value. */
  readonly parse?: ((value: string, previous: T | undefined) => T) | undefined;
  readonly defaultValue?: T | undefined;
  readonly required?: boolean | undefined;
  /** The values a choice takes (help, parsing, completion). */
  readonly choices?: readonly string[] | undefined;
  /** Values shell completion offers for an option checked by its command (see `completes`). */
  readonly values?: readonly string[] | undefined;
  /** The value is a comma-separated list of `values` (completion completes after the last comma). */
  readonly valueList?: boolean | undefined;
  /** Phantom: whether the value is always there (a default, a required option, a negatable flag). */
  readonly always?: Always;
}

// biome-ignore lint/suspicious/noExplicitAny: each spec keeps its own value type
export type OptionSpecs = Readonly<Record<string, OptionSpec<any, boolean>>>;

type ValueOf<S> = S extends OptionSpec<infer T, infer A> ? (A extends true ? T : T | undefined) : never;

export type InferOptions<O extends OptionSpecs> = { -readonly [K in keyof O]: ValueOf<O[K]> };

/** A bad option value: program.ts reports it as commander reports any invalid argument (exit 2). */
export class OptionValueError extends Error {}

export const takesValue = (spec: Pick<OptionSpec, 'flags'>) => /</.test(spec.flags);

/** The long name of the option: '--per-page' of '--per-page <n>'. */
export const longName = (spec: Pick<OptionSpec, 'flags'>) => spec.flags.match(/--[\w-]+/)?.[0] ?? spec.flags;

export function flag(flags: string, description: string): OptionSpec<boolean, false> {
  return { kind: 'flag', flags, description };
}

/** '--no-x': true unless given. */
export function negate(flags: `--no-${string}`, description: string): OptionSpec<boolean, true> {
  return { kind: 'negate', flags, description };
}

interface IntOptions {
  /** 1 (default) or 0. */
  min?: 0 | 1;
  max?: number;
}

/** A whole number: "--page must be a whole number, not …", "… must be between 1 and N, not …". */
// With a default, the value is always there.
export function int(
  flags: string,
  description: string,
  opts: IntOptions & { default: number },
): OptionSpec<number, true>;
export function int(flags: string, description: string, opts?: IntOptions): OptionSpec<number, false>;
export function int(
  flags: string,
  description: string,
  opts: IntOptions & { default?: number } = {},
): OptionSpec<number> {
  const name = longName({ flags });
  const min = opts.min ?? 1;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  return {
    kind: 'int',
    flags,
    description,
    defaultValue: opts.default,
    parse: (value) => {
      const v = value.trim();
      // Text that is no number is not quoted back: a paste gone wrong may be a secret.
      // A negative number is a number out of range ("--radius -3"), said as such.
      if (!/^-?\d+$/.test(v))
        throw new OptionValueError(
          `${name} must be a whole number${max === Number.MAX_SAFE_INTEGER ? '' : `, ${min} to ${max}`}.`,
        );
      const n = Number(v);
      if (n < min || n > max)
        throw new OptionValueError(
          // No upper bound worth naming (9007199254740991): only the lower one.
          max === Number.MAX_SAFE_INTEGER
            ? n < min
              ? `${name} must be ${min} or more, not ${value}.`
              : `${name} is too large: ${value} (at most ${num(max)}).`
            : `${name} must be between ${min} and ${max}, not ${value}.`,
        );
      return n;
    },
  };
}

/** A TCP port, 0 to 65535 (0 picks a free one). */
export function port(flags: string, description: string, opts: { default: number }): OptionSpec<number, true>;
export function port(flags: string, description: string): OptionSpec<number, false>;
export function port(
  flags: string,
  description: string,
  opts: { default?: number } = {},
): OptionSpec<number> {
  return {
    kind: 'port',
    flags,
    description,
    defaultValue: opts.default,
    parse: (value) => {
      const v = value.trim();
      if (!/^\d+$/.test(v) || Number(v) > 65535)
        throw new OptionValueError('must be a port from 0 to 65535.');
      return Number(v);
    },
  };
}

/** Free text, checked (if at all) by the handler. */
export function text(flags: string, description: string, opts: { required: true }): OptionSpec<string, true>;
export function text(flags: string, description: string): OptionSpec<string, false>;
export function text(
  flags: string,
  description: string,
  opts: { required?: boolean } = {},
): OptionSpec<string> {
  return { kind: 'text', flags, description, required: opts.required };
}

/** A file path ('-' for standard input where the command says so): completion offers files. */
export function file(flags: string, description: string, opts: { required: true }): OptionSpec<string, true>;
export function file(flags: string, description: string): OptionSpec<string, false>;
export function file(
  flags: string,
  description: string,
  opts: { required?: boolean } = {},
): OptionSpec<string> {
  return { kind: 'file', flags, description, required: opts.required, parse: namedPath(flags) };
}

/** A folder path: completion offers folders. */
export function folder(flags: string, description: string): OptionSpec<string, false> {
  return { kind: 'folder', flags, description, parse: namedPath(flags) };
}

// An empty name is no file or folder: taken as is, it would be the current folder or an odd "cannot read".
function namedPath(flags: string) {
  const name = longName({ flags });
  return (value: string) => {
    if (value.trim() === '')
      throw new OptionValueError(`${name} needs a name, and it is ${value === '' ? 'empty' : 'blank'}.`);
    return value;
  };
}

export function choice<const C extends string>(
  flags: string,
  choices: readonly C[],
  description: string,
  opts: { default?: undefined; parse?: (value: string) => C } = {},
): OptionSpec<C, false> {
  return {
    kind: 'choice',
    flags,
    description,
    choices,
    defaultValue: opts.default,
    parse: opts.parse,
  };
}

/** A repeatable option: every value, in order. */
export function list(flags: string, description: string): OptionSpec<string[], false> {
  return { kind: 'list', flags, description, parse: (v, prev) => [...(prev ?? []), v] };
}

/** A repeatable KEY=VALUE option: the pairs, in order. */
export function pairs(flags: string, description: string): OptionSpec<Array<[string, string]>, false> {
  return {
    kind: 'pairs',
    flags,
    description,
    parse: (value, previous) => {
      const i = value.indexOf('=');
      if (i <= 0) throw new OptionValueError('expected KEY=VALUE.');
      return [...(previous ?? []), [value.slice(0, i), value.slice(i + 1)]];
    },
  };
}

// The values shell completion offers for an option whose value its command checks itself (with its own
// message): `completes(text('--env <name>', …), ENVIRONMENTS)`.
// biome-ignore lint/suspicious/noExplicitAny: any spec, its value type kept
export function completes<S extends OptionSpec<any, boolean>>(
  spec: S,
  values: readonly string[],
  opts: { list?: boolean } = {},
): S {
  return { ...spec, values, valueList: opts.list };
}

export interface ArgSpec<Required extends boolean = boolean> {
  /** '<code>' (required) or '[query]' (optional). */
  readonly name: string;
  readonly description: string;
  readonly required: Required;
  /** Values shell completion offers (the command still checks what it is given). */
  readonly values?: readonly string[] | undefined;
}

export function arg<const N extends string>(
  name: N,
  description: string,
  opts: { values?: readonly string[] } = {},
): ArgSpec<N extends `<${string}>` ? true : false> {
  return { name, description, required: name.startsWith('<'), values: opts.values } as unknown as ArgSpec<
    N extends `<${string}>` ? true : false
  >;
}

export type InferArgs<A extends readonly ArgSpec[]> = {
  -readonly [I in keyof A]: A[I] extends ArgSpec<true> ? string : string | undefined;
};
