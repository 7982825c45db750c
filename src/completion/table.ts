import { type AnyCommand, writesCsv } from '../cli/define.js';
import { formatDescription, GLOBAL_OPTIONS } from '../cli/globals.js';
import type { ArgSpec, OptionSpec } from '../cli/options.js';
import { selectableNames } from '../output/fields.js';
import { DEFAULT_FORMATS } from '../output/format.js';
import { COMMANDS, GROUPS } from '../registry.js';

// What completion answers from, taken from the definitions the parser uses; written at build time
// (dist/completion.json), so a TAB press loads no command.
export interface CompletionOption {
  /** Every spelling: ['-o', '--output']. */
  flags: string[];
  description: string;
  /** Takes a value. */
  value: boolean;
  values?: string[];
  /** A comma-separated list of `values`. */
  list?: boolean;
  /** The value is a file path. */
  file?: boolean;
  /** The value is a folder path. */
  folder?: boolean;
  /** May be given more than once. */
  repeatable?: boolean;
}

interface CompletionArg {
  name: string;
  values?: string[];
}

export interface CompletionCommand {
  path: string[];
  summary: string;
  options: CompletionOption[];
  args: CompletionArg[];
  /** The --format values it takes, when not every one, and --format's description for it. */
  formats?: string[];
  formatDescription?: string;
  /** The names its --fields takes (every documented path and object). */
  fields?: string[];
  /** The global flags it refuses (resolveGlobals, ctx.format): never offered for it. */
  refuses?: string[];
}

export interface CompletionTable {
  version: 1;
  globals: CompletionOption[];
  groups: Array<{ name: string; summary: string }>;
  commands: CompletionCommand[];
}

// biome-ignore lint/suspicious/noExplicitAny: any spec
function optionEntry(spec: OptionSpec<any>): CompletionOption {
  // An optional value (--json [fields]) is not waited for: the next word may be a command.
  const value = /</.test(spec.flags);
  const values = spec.values ?? spec.choices;
  return {
    flags: spec.flags.match(/-{1,2}[\w-]+/g) ?? [],
    description: spec.description,
    value,
    ...(values ? { values: [...values] } : {}),
    ...(spec.valueList ? { list: true } : {}),
    ...(spec.kind === 'file' ? { file: true } : {}),
    ...(spec.kind === 'folder' ? { folder: true } : {}),
    ...(spec.kind === 'list' || spec.kind === 'pairs' ? { repeatable: true } : {}),
  };
}

const HELP: CompletionOption = { flags: ['-h', '--help'], description: 'show help', value: false };

export async function buildCompletionTable(): Promise<CompletionTable> {
  const defs: AnyCommand[] = await Promise.all(COMMANDS.map(async (c) => (await c.load()).default));
  return {
    version: 1,
    globals: [...Object.values(GLOBAL_OPTIONS).map(optionEntry), HELP],
    groups: GROUPS.map((g) => ({ name: g.name, summary: g.summary })),
    commands: COMMANDS.map((c, i) => {
      const def = defs[i]!;
      const refuses = [
        ...((def.formats ?? DEFAULT_FORMATS).includes('json') ? [] : ['--json']),
        ...(def.fields ? [] : ['--fields']),
        ...(writesCsv(def) ? [] : ['--bom', '--no-formula-guard']),
      ];
      return {
        path: [...c.path],
        summary: c.summary,
        options: Object.values((def.options ?? {}) as Record<string, OptionSpec>).map(optionEntry),
        args: ((def.args ?? []) as readonly ArgSpec[]).map((a) => ({
          name: a.name,
          ...(a.values ? { values: [...a.values] } : {}),
        })),
        ...(def.formats ? { formats: [...def.formats] } : {}),
        formatDescription: formatDescription(def.formats ?? DEFAULT_FORMATS),
        ...(def.fields ? { fields: [...selectableNames(def.fields.flatMap((s) => s.fields))] } : {}),
        ...(refuses.length > 0 ? { refuses } : {}),
      };
    }),
  };
}
