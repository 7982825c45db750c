import { Command, Help, InvalidArgumentError, Option } from 'commander';
import type { AnyCommand } from './commands/define.js';
import { commandTarget, formatDescription, GLOBAL_OPTIONS } from './commands/globals.js';
import { type OptionSpec, type OptionSpecs, OptionValueError } from './commands/options.js';
import { HELP_EXAMPLES } from './help/examples.js';
import { docsLine, fitExample, fitHelpText, wrapProse } from './help/format.js';
import type { IO } from './io.js';
import { fieldsHelp } from './output/fields.js';
import { HumanStream } from './output/text.js';
import { COMMANDS, GROUPS } from './registry.js';
import { VERSION } from './version.js';

/** Runs a command's handler: main.ts builds the Context from the parsed global options. */
export type Runner = (
  def: AnyCommand,
  args: unknown[],
  opts: Record<string, unknown>,
  globals: Record<string, unknown>,
) => Promise<void>;

const ROOT_EXAMPLES = [
  'imaging mock &                        # the local emulator, then:',
  'imaging --env local cpt 73721',
  'imaging --env local icd10 "meniscus tear" --json',
  'imaging --env local referrals export --rows visit -o visits.csv',
  'imaging webhook verify --request delivery.http --secret-file secret.txt',
];

const EXIT_CODES =
  'Exit codes: 0 ok, 1 failure, 2 usage, 3 auth, 4 not found, 5 forbidden, 6 limit, 7 rejected, 8 webhook not valid, 130 interrupted.';

/** Help is as wide as the terminal it is shown on; piped, commander's 80. */
function helpWidth(io: IO): number | undefined {
  return io.stdoutIsTTY && io.columns ? io.columns : undefined;
}

/** The examples and closing lines after a command's help, fitted to the width. */
function afterHelp(io: IO, examples: readonly string[], extra = ''): string {
  const width = Math.max(helpWidth(io) ?? 80, 20);
  const parts: string[] = [];
  if (examples.length) parts.push(`Examples:\n${examples.map((e) => fitExample(e, width)).join('\n')}`);
  if (extra) parts.push(wrapProse(extra, width));
  // Not wrapped: a path cut in two cannot be copied.
  parts.push(docsLine());
  return `\n${parts.join('\n\n')}`;
}

/**
 * `imaging help referrals get` is `imaging referrals get --help` (commander's own help command
 * reads one word only, and showed the group's help).
 */
export function routeHelp(argv: readonly string[]): readonly string[] {
  const at = argv.indexOf('help');
  if (at < 0 || commandTarget(argv.slice(0, at)) !== undefined) return argv;
  const rest = argv.slice(at + 1);
  const words: string[] = [];
  while (words.length < 2 && rest.length && !rest[0]!.startsWith('-')) words.push(rest.shift()!);
  if (words.length === 0) return argv;
  const entries = COMMANDS.filter((c) => c.path[0] === words[0]);
  // A top-level command takes no verb: `help cpt 73721` is the help of cpt, not a lookup.
  if (entries.length === 1 && entries[0]!.path.length === 1) words.length = 1;
  // An unknown command or verb goes to commander without --help, so that it says so (with a
  // suggestion) instead of showing the nearest help with exit 0.
  const known = entries.length > 0 && (words.length === 1 || entries.some((c) => c.path[1] === words[1]));
  return [...argv.slice(0, at), ...words, ...(known ? ['--help'] : rest)];
}

/**
 * The commander tree, from the registry. Only the invoked group (or top-level command) loads its
 * definitions and gets its options: defining every option of every command is a measurable part
 * of start-up, and a lookup needs none of them. The others are a name and a summary, for help and
 * for "Did you mean …?".
 */
export async function buildProgram(io: IO, argv: readonly string[], runner: Runner): Promise<Command> {
  // Parse errors quote the user's arguments: through the sanitiser like any stderr text.
  const output = {
    // Commander writes only help (and --version) here. Its own layout and our examples already fit;
    // this wraps any other text added after a command's help so no line passes the width (the
    // README's path aside: a path cut in two cannot be copied).
    writeOut: (s: string) => io.stdout.write(fitHelpText(s, helpWidth(io) ?? 80)),
    writeErr: (s: string) => new HumanStream(io.stderr).write(s),
    getOutHelpWidth: () => helpWidth(io) ?? 80,
    getErrHelpWidth: () => helpWidth(io) ?? 80,
  };
  const program = new Command('imaging');
  const target = commandTarget(argv);
  program
    .description(
      'Partner Imaging Referral API v2 from the terminal: reference lookups, referrals, exports, webhooks.',
    )
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help');
  for (const spec of Object.values(GLOBAL_OPTIONS)) program.addOption(toOption(spec));
  program
    .showSuggestionAfterError(true)
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({
      showGlobalOptions: true,
      // Long terms (`api [options] <method-or-path> [path]`) would leave the descriptions under
      // commander's 40 cells, which it then stops wrapping ("sign test e / vents" at 80 columns):
      // the term column is capped, and a longer term gets a line of its own.
      minWidthToWrap: 24,
      padWidth: (cmd, helper) => {
        const cap = Math.max(10, (helper.helpWidth ?? 80) - 44);
        const terms = [
          ...helper.visibleArguments(cmd).map((a) => helper.argumentTerm(a)),
          ...helper.visibleOptions(cmd).map((o) => helper.optionTerm(o)),
          ...helper.visibleGlobalOptions(cmd).map((o) => helper.optionTerm(o)),
          ...helper.visibleCommands(cmd).map((c) => helper.subcommandTerm(c)),
        ].map((t) => helper.displayWidth(t));
        return Math.max(0, ...terms.filter((w) => w <= cap));
      },
      formatItem: (term, termWidth, description, helper) => {
        const base = Help.prototype.formatItem;
        if (!description || helper.displayWidth(term) <= termWidth)
          return base.call(helper, term, termWidth, description, helper);
        return `  ${term}\n${base.call(helper, '', termWidth, description, helper)}`;
      },
      // Commands not built (not invoked) show the usage the registry gives for them.
      subcommandTerm: (cmd) => {
        const usage = termOf.get(cmd);
        if (usage !== undefined) return usage ? `${cmd.name()} ${usage}` : cmd.name();
        const args = cmd.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`));
        return [cmd.name(), ...(cmd.options.length ? ['[options]'] : []), ...args].join(' ');
      },
    })
    .helpCommand('help [command...]', 'show help for a command (imaging help referrals get)')
    .addHelpText('after', () => afterHelp(io, ROOT_EXAMPLES, EXIT_CODES))
    .configureOutput(output)
    .exitOverride();

  const termOf = new WeakMap<Command, string>();
  const groups = new Map<string, Command>();
  const wanted: Array<Promise<{ parent: Command; def: AnyCommand; summary: string }>> = [];
  // A known command run without any help asked for: the other commands are neither parsed nor
  // listed (commander's suggestions for a mistyped option or verb come from the invoked command,
  // its group and the global options), so they are not made at all. Help, an unknown or missing
  // command get every one, for the listing and "Did you mean …?".
  const lean =
    target !== undefined &&
    COMMANDS.some((c) => c.path[0] === target) &&
    !argv.some((a) => a === 'help' || a === '--help' || a === '-h');
  for (const entry of COMMANDS) {
    const [first, verb] = entry.path as [string, string | undefined];
    if (lean && first !== target) continue;
    if (verb === undefined) {
      if (target === first) {
        wanted.push(entry.load().then((m) => ({ parent: program, def: m.default, summary: entry.summary })));
      } else {
        const stub = program.command(first).description(entry.summary);
        termOf.set(stub, entry.usage ?? '');
      }
      continue;
    }
    let group = groups.get(first);
    if (!group) {
      const summary = GROUPS.find((g) => g.name === first)?.summary ?? '';
      group = program
        .command(first)
        .description(summary)
        .addHelpText('after', () => afterHelp(io, []));
      groups.set(first, group);
    }
    if (target === first) {
      const parent = group;
      wanted.push(entry.load().then((m) => ({ parent, def: m.default, summary: entry.summary })));
    }
  }
  // In registry order, whatever order the imports settle in.
  for (const { parent, def, summary } of await Promise.all(wanted)) {
    const name = def.path[def.path.length - 1]!;
    const cmd = parent.command(name).description(def.description ?? summary);
    addDefinition(cmd, def);
    if (def.formats) {
      // The global --format as this command takes it (export: csv, ndjson, json), as completion says.
      const formats = def.formats;
      cmd.configureHelp({
        ...cmd.configureHelp(),
        optionDescription(this: Help, option: Option) {
          return option.long === '--format'
            ? formatDescription(formats)
            : Help.prototype.optionDescription.call(this, option);
        },
      });
    }
    cmd.addHelpText('after', () =>
      afterHelp(io, [...(def.examples ?? []), ...(HELP_EXAMPLES[def.path.join(' ')] ?? [])]),
    );
    cmd.exitOverride();
    cmd.configureOutput(output);
    cmd.action(async (...raw: unknown[]) => {
      const self = raw[raw.length - 1] as Command;
      const given = self.opts();
      const opts: Record<string, unknown> = {};
      for (const key of Object.keys(def.options ?? {})) opts[key] = given[key];
      await runner(def, raw.slice(0, -2), opts, self.optsWithGlobals());
    });
  }
  return program;
}

/** A definition's arguments and options on its commander command (examples: buildProgram). */
export function addDefinition(cmd: Command, def: AnyCommand): void {
  for (const a of def.args ?? []) cmd.argument(a.name, a.description);
  for (const [key, spec] of Object.entries((def.options ?? {}) as OptionSpecs)) {
    const option = toOption(spec);
    // The key is the name the handler reads: it must be the one commander stores the value under.
    if (option.attributeName() !== key)
      throw new Error(
        `${def.path.join(' ')}: option ${spec.flags} is stored as ${option.attributeName()}, not ${key}`,
      );
    cmd.addOption(option);
  }
  if (def.fields) cmd.addHelpText('after', fieldsHelp(def.fields));
}

// biome-ignore lint/suspicious/noExplicitAny: any spec, whatever its value type
function toOption(spec: OptionSpec<any>): Option {
  const option = new Option(spec.flags, spec.description);
  if (spec.parse) {
    const parse = spec.parse;
    option.argParser((value: string, previous: unknown) => {
      try {
        return parse(value, previous);
      } catch (err) {
        if (err instanceof OptionValueError) throw new InvalidArgumentError(err.message);
        throw err;
      }
    });
  } else if (spec.choices) option.choices(spec.choices);
  if (spec.defaultValue !== undefined) option.default(spec.defaultValue);
  if (spec.required) option.makeOptionMandatory();
  return option;
}
