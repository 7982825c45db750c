import { Command, InvalidArgumentError, Option } from 'commander';
import type { AnyCommand } from './commands/define.js';
import { commandTarget, GLOBAL_OPTIONS } from './commands/globals.js';
import { type OptionSpec, type OptionSpecs, OptionValueError } from './commands/options.js';
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

const ROOT_HELP = `
Examples:
  imaging mock &                                   # the local emulator, then:
  imaging --env local cpt 73721
  imaging icd10 "meniscus tear" --json
  imaging referrals export --rows visit -o visits.csv
  imaging webhook verify --request delivery.http --secret-file secret.txt

Exit codes: 0 ok, 1 failure, 2 usage, 3 auth, 4 not found, 5 forbidden, 6 limit, 7 rejected,
8 webhook not valid, 130 interrupted. Docs: README.md`;

/**
 * The commander tree, from the registry. Only the invoked group (or top-level command) loads its
 * definitions and gets its options: defining every option of every command is a measurable part
 * of start-up, and a lookup needs none of them. The others are a name and a summary, for help and
 * for "Did you mean …?".
 */
export async function buildProgram(io: IO, argv: readonly string[], runner: Runner): Promise<Command> {
  // Parse errors quote the user's arguments: through the sanitiser like any stderr text.
  const output = {
    writeOut: (s: string) => io.stdout.write(s),
    writeErr: (s: string) => new HumanStream(io.stderr).write(s),
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
      // Commands not built (not invoked) show the usage the registry gives for them.
      subcommandTerm: (cmd) => {
        const usage = termOf.get(cmd);
        if (usage !== undefined) return usage ? `${cmd.name()} ${usage}` : cmd.name();
        const args = cmd.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`));
        return [cmd.name(), ...(cmd.options.length ? ['[options]'] : []), ...args].join(' ');
      },
    })
    .addHelpText('after', ROOT_HELP)
    .configureOutput(output)
    .exitOverride();

  const termOf = new WeakMap<Command, string>();
  const groups = new Map<string, Command>();
  const wanted: Array<Promise<{ parent: Command; def: AnyCommand; summary: string }>> = [];
  for (const entry of COMMANDS) {
    const [first, verb] = entry.path as [string, string | undefined];
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
      group = program.command(first).description(summary);
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

/** A definition's arguments, options and examples on its commander command. */
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
  if (def.examples?.length)
    cmd.addHelpText('after', `\nExamples:\n${def.examples.map((e) => `  ${e}`).join('\n')}`);
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
