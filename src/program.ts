import { Command, CommanderError, Help, Option } from 'commander';
import { MAX_ARG_BYTES } from './cli/args.js';
import { type AnyCommand, writesCsv } from './cli/define.js';
import { CSV_OPTIONS, FIELDS_TWICE, formatDescription, GLOBAL_OPTIONS } from './cli/globals.js';
import { jsonTakes } from './cli/json-fields.js';
import { longName, type OptionSpec, type OptionSpecs, OptionValueError } from './cli/options.js';
import { UsageError } from './errors.js';
import { HELP_EXAMPLES } from './help/examples.js';
import { docsLine, fitExample, fitHelpText, wrapProse } from './help/format.js';
import { optionSynonym, secretFlagMisuse, verbSynonym, verbWithoutGroup } from './hints.js';
import type { IO } from './io.js';
import { fieldsHelp } from './output/fields.js';
import { DEFAULT_FORMATS, FORMATS, parseFormat } from './output/format.js';
import { HumanStream } from './output/text.js';
import { COMMANDS, GROUPS } from './registry.js';
import { versionLine } from './version.js';

/** Runs a command's handler: main.ts builds the Context from the parsed global options. */
type Runner = (
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
  'Exit codes: 0 ok, 1 failure, 2 usage, 3 auth, 4 not found, 5 forbidden, 6 limit, 7 rejected, 8 webhook not valid, 9 not yet, 10 cannot happen, 130 interrupted.';

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

/** The parser: commander's Command with this tool's words for what it refuses. */
class Parser extends Command {
  override createCommand(name?: string): Parser {
    return new Parser(name);
  }

  /** The bare `--json` before a word that is not a field list leaves that word to the command. */
  override parseOptions(args: string[]) {
    const words = [...args];
    const stop = words.indexOf('--') < 0 ? words.length : words.indexOf('--');
    const def = DEFS.get(this);
    const names = this.commands.map((c) => c.name());
    // The program and a group read their options up to the command's name (positional options).
    const last = def ? stop : Math.min(stop, ...words.map((w, i) => (names.includes(w) ? i : stop)));
    for (let i = 0; i < Math.min(last, stop - 1); i++) {
      const next = words[i + 1]!;
      if (words[i] !== '--json' || next.startsWith('-')) continue;
      const rest = words.slice(i + 2, stop);
      if (jsonTakes(next, rest, def ? { def } : { commands: names })) continue;
      words.splice(i, 1);
      words.splice(stop - 1, 0, '--json');
    }
    const parsed = super.parseOptions(words);
    // A command's unknown option is named before a missing required one: a secret given as a flag
    // is refused as such whatever else is missing.
    const unknown = parsed.unknown[0];
    if (def && unknown?.startsWith('-') && !words.some((w) => w === '--help' || w === '-h'))
      this.unknownOption(unknown);
    return parsed;
  }

  override error(message: string, opts: { code?: string } = {}): never {
    let text = message.replace(/^error: /, '');
    let hint: string | undefined;
    const suggestion = /\s*\(Did you mean (.+)\?\)$/.exec(text);
    if (suggestion) {
      text = text.slice(0, suggestion.index);
      hint = `Did you mean ${suggestion[1]}?`;
    }
    const invalid = /^option '([^']+)' argument [\s\S]* is invalid\.\s*([\s\S]*)$/.exec(text);
    if (invalid) {
      text = `invalid value for ${longName({ flags: invalid[1]! })}`;
      hint = invalid[2] || undefined;
    }
    if (opts.code === 'commander.unknownCommand') {
      const word = String(this.args[0]);
      const verbs = this.commands.filter((c) => c.name() !== 'help').map((c) => c.name());
      hint =
        (this.parent ? verbSynonym(this.name(), word) : verbWithoutGroup(word)) ??
        hint ??
        `The ${this.parent ? `verbs of imaging ${this.name()}` : 'commands'}: ${verbs.join(', ')}.`;
    }
    throw new UsageError(
      text,
      hint ?? `See: ${['imaging', commandPath(this)].filter(Boolean).join(' ')} --help`,
    );
  }

  /** Commander's unknown option, by name only: `--opt=VALUE` and `-xVALUE` never reach the message. */
  unknownOption(flag: string): never {
    const name = flag.startsWith('--') ? flag.split('=', 1)[0]! : flag.slice(0, 2);
    const root = rootOf(this);
    const secret = secretFlagMisuse(name, commandPath(this).split(' ')[0]!);
    if (secret) throw secret;
    const synonym = optionSynonym(commandPath(this), name);
    if (synonym) throw new UsageError(`unknown option '${name}'`, synonym);
    if (name !== flag && this.options.some((o) => o.long === name || o.short === name))
      throw new UsageError(`${name} takes no value`, `Give ${name} alone, without "=…".`);
    const base = (Command.prototype as unknown as { unknownOption(f: string): never }).unknownOption;
    try {
      base.call(this, name);
    } catch (err) {
      // Commander suggests from the command's own options; the global ones are the program's.
      if (!(err instanceof UsageError) || err.hint?.startsWith('Did you mean') || this === root) throw err;
      try {
        base.call(root, name);
      } catch (global) {
        if (global instanceof UsageError && global.hint?.startsWith('Did you mean'))
          throw new UsageError(err.message, global.hint);
      }
      throw err;
    }
    throw new UsageError(`unknown option '${name}'`);
  }
}

const DEFS = new WeakMap<Command, AnyCommand>();

const rootOf = (cmd: Command): Command => (cmd.parent ? rootOf(cmd.parent) : cmd);
const commandPath = (cmd: Command): string => {
  const words: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) words.unshift(c.name());
  return words.join(' ');
};

// The global options on a command: every command reads them (before or after its name) and the program's help
// lists them; elsewhere they are hidden, but for the CSV ones on a command that can write CSV.
function addGlobals(cmd: Command, where: 'program' | 'command' | 'csv'): void {
  for (const [key, spec] of Object.entries(GLOBAL_OPTIONS)) {
    const option = toOption(spec);
    const csv = CSV_OPTIONS.has(key as keyof typeof GLOBAL_OPTIONS);
    if (where === 'program' ? csv : !(csv && where === 'csv')) option.hideHelp();
    cmd.addOption(option);
  }
  if (where === 'program') return;
  // The version, as the program answers it, wherever it is asked (imaging cpt -V).
  cmd.addOption(new Option('-V, --version').hideHelp());
  cmd.on('option:version', () => {
    const line = versionLine(bundleDir());
    cmd.configureOutput().writeOut?.(`${line}\n`);
    throw new CommanderError(0, 'commander.version', line);
  });
}

// The global options as the command's handler gets them: each from the deepest command it was given on (else
// its default), and `--json a,b` as `--json --fields a,b`.
function resolveGlobals(cmd: Command, def: AnyCommand): Record<string, unknown> {
  const levels: Command[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) levels.push(c);
  const globals: Record<string, unknown> = {};
  for (const key of Object.keys(GLOBAL_OPTIONS)) {
    const given = levels.find((c) => c.getOptionValueSource(key) === 'cli') ?? levels[levels.length - 1]!;
    globals[key] = given.getOptionValue(key);
  }
  const fields = levels.flatMap((c) => [
    ...(c.getOptionValueSource('fields') === 'cli' ? [c.getOptionValue('fields') as string] : []),
    // `--json=` (nothing after "=") is a bare --json.
    ...(typeof c.getOptionValue('json') === 'string' && c.getOptionValue('json') !== ''
      ? [c.getOptionValue('json') as string]
      : []),
  ]);
  if (fields.length > 1) throw new UsageError(FIELDS_TWICE);
  globals.fields = fields[0];
  globals.json = levels.some((c) => c.getOptionValue('json') !== undefined) || undefined;
  const path = def.path.join(' ');
  if (typeof globals.format === 'string') {
    // The formats this command takes, in the hint as in its help.
    const allowed: readonly string[] = def.formats ?? DEFAULT_FORMATS;
    const f = globals.format.trim().toLowerCase();
    const hint = `Use one of: ${allowed.join(', ')}.`;
    if (!(FORMATS as readonly string[]).includes(f))
      throw new UsageError(`--format: unknown format "${globals.format}"`, hint);
    if (!allowed.includes(f)) throw new UsageError(`--format ${f} is not available here`, hint);
  }
  // The --json hint only where --json is taken (watch prints no JSON).
  if (globals.fields !== undefined && !def.fields)
    throw new UsageError(
      `--fields is not available for imaging ${path}`,
      (def.formats ?? DEFAULT_FORMATS).includes('json') ? 'Use --json for every field.' : undefined,
    );
  // `--json a,b` is `--format json --fields a,b`: with another --format it asks for two formats.
  const f = globals.json && typeof globals.format === 'string' ? parseFormat(globals.format) : undefined;
  if (f && f !== 'json')
    throw new UsageError(
      `--json and --format ${f} ask for two formats (--json is --format json)`,
      `For ${f} with chosen fields: --format ${f} --fields a,b; for JSON leave --format ${f} out.`,
    );
  const csvFlag = globals.bom ? '--bom' : globals.formulaGuard === false ? '--no-formula-guard' : undefined;
  if (csvFlag && !writesCsv(def))
    throw new UsageError(
      `${csvFlag} is for CSV output, and imaging ${path} writes no CSV`,
      `Leave ${csvFlag} out.`,
    );
  return globals;
}

// The bundle's folder (dist/; under the test runner, src/), which tells a clone from the npm package.
const bundleDir = () => (typeof __dirname === 'string' ? __dirname : undefined);

export function buildProgram(io: IO, runner: Runner): Command {
  const output = {
    // Commander writes only help (and --version) here.
    writeOut: (s: string) => io.stdout.write(fitHelpText(s, helpWidth(io) ?? 80)),
    // Help shown for a mistake (a group without its verb): through the sanitiser like any stderr text.
    writeErr: (s: string) => new HumanStream(io.stderr).write(s),
    getOutHelpWidth: () => helpWidth(io) ?? 80,
    getErrHelpWidth: () => helpWidth(io) ?? 80,
  };
  const program = new Parser('imaging');
  program
    .description(
      'Partner Imaging Referral API v2 from the terminal: reference lookups, referrals, exports, webhooks.',
    )
    .version(versionLine(bundleDir()), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .enablePositionalOptions()
    .configureHelp(HELP_LAYOUT)
    .helpCommand(false)
    .configureOutput(output)
    .exitOverride();
  addGlobals(program, 'program');
  program.addHelpText('after', () => afterHelp(io, ROOT_EXAMPLES, EXIT_CODES));
  for (const entry of COMMANDS) {
    const [first, verb] = entry.path as [string, string | undefined];
    if (verb === undefined) {
      USAGE.set(program.command(first).description(entry.summary), entry.usage ?? '');
    } else if (!program.commands.some((c) => c.name() === first)) {
      program.command(first).description(GROUPS.find((g) => g.name === first)?.summary ?? '');
    }
  }
  const build = (cmd: Command) => buildCommand(cmd, io, runner);
  program.hook('preSubcommand', (_program, sub) => build(sub));

  // `imaging help referrals get` is `imaging referrals get --help` (commander's help reads one word only).
  program
    .command('help')
    .argument('[command...]')
    .description('show help for a command (imaging help referrals get)')
    .action(async (words: string[]) => {
      const top = program.commands.find((c) => c.name() === words[0] && c.name() !== 'help');
      if (!top) {
        if (!words.length) program.help();
        await program.parseAsync(words, { from: 'user' });
        return;
      }
      await build(top);
      // A top-level command takes no verb: `help cpt 73721` is the help of cpt, not a lookup.
      const path = top.commands.length ? words.slice(0, 2) : words.slice(0, 1);
      const known = path.length === 1 || top.commands.some((c) => c.name() === path[1]);
      await program.parseAsync(known ? [...path, '--help'] : path, { from: 'user' });
    });
  return program;
}

/** Whether --no-color was given on any command parsed so far (a parser error's colour). */
export function noColorGiven(cmd: Command): boolean {
  return cmd.getOptionValue('color') === false || cmd.commands.some(noColorGiven);
}

/** What root help prints after the name of a top-level command not built (the registry's usage). */
const USAGE = new WeakMap<Command, string>();

/** Commander's help, fitted: the layout of every command's help. */
const HELP_LAYOUT: Partial<Help> = {
  showGlobalOptions: true,
  // The term column is capped (a long term gets a line of its own): commander stops wrapping descriptions
  // it leaves under 40 cells.
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
    const usage = USAGE.get(cmd);
    if (usage !== undefined && !DEFS.has(cmd)) return usage ? `${cmd.name()} ${usage}` : cmd.name();
    const args = cmd.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`));
    const options = cmd.options.some((o) => !o.hidden);
    return [cmd.name(), ...(options ? ['[options]'] : []), ...args].join(' ');
  },
};

const BUILT = new WeakSet<Command>();

/** The invoked group's commands (or the top-level command) from their definitions, once. */
async function buildCommand(cmd: Command, io: IO, runner: Runner): Promise<void> {
  if (BUILT.has(cmd)) return;
  BUILT.add(cmd);
  if (cmd.name() === 'help') return addGlobals(cmd, 'command');
  const entries = COMMANDS.filter((c) => c.path[0] === cmd.name());
  const defs = await Promise.all(entries.map(async (e) => (await e.load()).default));
  if (entries.length === 1 && entries[0]!.path.length === 1)
    return defineOn(cmd, defs[0]!, entries[0]!.summary, io, runner);
  // A group's own help: made only for the group invoked, as its verbs are.
  cmd.helpCommand('help [verb]', 'show help for a verb').addHelpText('after', () => afterHelp(io, []));
  addGlobals(cmd, 'command');
  for (const [i, e] of entries.entries()) defineOn(cmd.command(e.path[1]!), defs[i]!, e.summary, io, runner);
}

/** One command's definition on its commander command: help, options, and the handler's call. */
function defineOn(cmd: Command, def: AnyCommand, summary: string, io: IO, runner: Runner): void {
  DEFS.set(cmd, def);
  // The one-line summary heads the command's help too; a longer description follows it.
  cmd.summary(summary).description(def.description ? `${summary}\n\n${def.description}` : summary);
  addDefinition(cmd, def);
  addGlobals(cmd, writesCsv(def) ? 'csv' : 'command');
  {
    // The global --format as this command takes it (export: csv, ndjson, json), as completion says
    // (the root help lists every format); and never offered what it refuses: --json without JSON
    // among its formats, --fields without fields.
    const formats = def.formats ?? DEFAULT_FORMATS;
    const refused = [...(formats.includes('json') ? [] : ['--json']), ...(def.fields ? [] : ['--fields'])];
    cmd.configureHelp({
      ...cmd.configureHelp(),
      optionDescription(this: Help, option: Option) {
        return option.long === '--format'
          ? formatDescription(formats)
          : Help.prototype.optionDescription.call(this, option);
      },
      visibleGlobalOptions(this: Help, c: Command) {
        return Help.prototype.visibleGlobalOptions
          .call(this, c)
          .filter((o) => !refused.includes(o.long ?? ''));
      },
    });
  }
  cmd.addHelpText('after', () =>
    afterHelp(io, [...(def.examples ?? []), ...(HELP_EXAMPLES[def.path.join(' ')] ?? [])]),
  );
  cmd.action(async (...raw: unknown[]) => {
    const self = raw[raw.length - 1] as Command;
    const given = self.opts();
    const opts: Record<string, unknown> = {};
    for (const key of Object.keys(def.options ?? {})) opts[key] = given[key];
    checkArgLengths(def, raw.slice(0, -2));
    await runner(def, raw.slice(0, -2), opts, resolveGlobals(self, def));
  });
}

/** An argument over 4 KiB is no reference, code, name or path: refused before any request, never repeated. */
function checkArgLengths(def: AnyCommand, values: unknown[]): void {
  values.forEach((value, i) => {
    const texts = Array.isArray(value) ? value : [value];
    if (!texts.some((t) => typeof t === 'string' && Buffer.byteLength(t) > MAX_ARG_BYTES)) return;
    const name = (def.args?.[i]?.name ?? 'argument').replace(/[<>[\].]/g, '');
    throw new UsageError(`the ${name} given is longer than 4 KiB`, 'Nothing was sent.');
  });
}

/** A definition's arguments and options on its commander command. */
function addDefinition(cmd: Command, def: AnyCommand): void {
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
  // Written when help is asked for, not at every run of the command.
  const fields = def.fields;
  if (fields) cmd.addHelpText('after', () => fieldsHelp(fields));
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
        // The option's own message (it names the option), in the one error block.
        if (err instanceof OptionValueError)
          throw new UsageError(
            err.message.includes(longName(spec)) ? err.message : `${longName(spec)}: ${err.message}`,
          );
        throw err;
      }
    });
  } else if (spec.choices) option.choices(spec.choices);
  if (spec.defaultValue !== undefined) option.default(spec.defaultValue);
  if (spec.required) option.makeOptionMandatory();
  return option;
}
