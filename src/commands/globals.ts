import { ENVIRONMENTS } from '../config/environments.js';
import { FORMATS } from '../output/format.js';
import {
  completes,
  flag,
  type InferOptions,
  int,
  negate,
  OptionValueError,
  takesValue,
  text,
} from './options.js';

/**
 * The options every command accepts, before or after the subcommand: the one list the program's
 * options, `GlobalOptions` and the argv pre-scan (which word names the command) all come from.
 * Adding a global option is one line here.
 */
/** The --format option's description: every format, or the ones a command takes (help, completion). */
export const formatDescription = (formats: readonly string[] = FORMATS): string =>
  `output format: ${formats.join(', ')}`;

export const GLOBAL_OPTIONS = {
  env: completes(text('--env <name>', 'environment: sandbox, production or local'), ENVIRONMENTS),
  baseUrl: text('--base-url <url>', 'API base URL (the part before /api/v2)'),
  format: completes(text('--format <format>', formatDescription()), FORMATS),
  json: flag('--json', 'same as --format json; --json a,b,c also picks fields (--fields a,b,c)'),
  fields: {
    ...text('--fields <names>', 'print only these fields, in this order (a,b,c; dotted for nested ones)'),
    parse: (value: string, previous: string | undefined) => {
      if (previous !== undefined)
        throw new OptionValueError('give the fields once (--fields or --json a,b,c).');
      return value;
    },
  },
  bom: flag('--bom', 'CSV: start with a UTF-8 byte-order mark (Excel)'),
  formulaGuard: negate('--no-formula-guard', "CSV: do not prefix cells starting with = + - @ with '"),
  timeout: int('--timeout <ms>', 'per-request timeout in milliseconds (default 30000)', { max: 3_600_000 }),
  verbose: flag('--verbose', 'HTTP trace on stderr (never the token or bodies)'),
  color: negate('--no-color', 'no colour in output'),
  yes: flag('-y, --yes', 'answer yes to confirmations'),
  cache: negate('--no-cache', 'neither read nor write the reference-data cache'),
  refresh: flag('--refresh', 'fetch reference data anew and store it in the cache'),
  wide: flag('--wide', 'tables: every column, nothing cut'),
};

export type GlobalOptions = Partial<InferOptions<typeof GLOBAL_OPTIONS>>;

/** Every spelling of a global option that takes a value ('--env', and '-x' for a short one). */
const VALUED = new Set(
  Object.values(GLOBAL_OPTIONS)
    .filter(takesValue)
    .flatMap((o) => o.flags.match(/-{1,2}[\w-]+/g) ?? []),
);

/** The command (or group) the arguments name: the first word that is not an option or a global option's value. */
export function commandTarget(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return undefined;
    if (a.startsWith('-')) {
      if (VALUED.has(a)) i++;
      continue;
    }
    return a === 'help' ? argv[i + 1] : a;
  }
  return undefined;
}
