import { ENVIRONMENTS } from '../config/environments.js';
import { DEFAULT_FORMATS, FORMATS } from '../output/format.js';
import { millis } from './duration.js';
import { completes, flag, type InferOptions, negate, OptionValueError, text } from './options.js';

// The options every command accepts, before or after the subcommand: the one list everything reads.
/** The --format option's description: every format, or the ones a command takes (help, completion). */
export const formatDescription = (formats: readonly string[] = DEFAULT_FORMATS): string =>
  `output format: ${formats.join(', ')}`;

/** The global --format, as the root help lists it: every format, those only some commands take said so. */
const someCommands = FORMATS.filter((f) => !DEFAULT_FORMATS.includes(f));
export const globalFormatDescription = `${formatDescription()}${someCommands.length > 0 ? `; ${someCommands.join(', ')} where a command takes it (see its --help)` : ''}`;

export const GLOBAL_OPTIONS = {
  env: completes(text('--env <name>', 'environment: sandbox, production or local'), ENVIRONMENTS),
  baseUrl: text('--base-url <url>', 'API base URL (the part before /api/v2)'),
  format: completes(text('--format <format>', globalFormatDescription), DEFAULT_FORMATS),
  // The word after a bare --json is a field list or the command's own (program.ts: jsonTakes).
  json: flag('--json [fields]', 'same as --format json; --json a,b,c also picks fields (--fields a,b,c)'),
  fields: {
    ...text('--fields <names>', 'print only these fields, in this order (a,b,c; dotted for nested ones)'),
    parse: (value: string, previous: string | undefined) => {
      if (previous !== undefined) throw new OptionValueError(FIELDS_TWICE);
      return value;
    },
  },
  bom: flag('--bom', 'CSV: start with a UTF-8 byte-order mark (Excel)'),
  formulaGuard: negate(
    '--no-formula-guard',
    "CSV: do not prefix cells starting with = + - @ with ' (xlsx needs no guard: every cell is typed text or a number or date, never a formula)",
  ),
  timeout: millis(
    '--timeout <ms>',
    'per-request timeout in milliseconds, or a duration such as 5s (default 30000, at most 1h)',
    { min: 1, max: 3_600_000 },
  ),
  verbose: flag('--verbose', 'HTTP trace on stderr (never the token or bodies)'),
  color: negate('--no-color', 'no colour in output'),
  yes: flag('-y, --yes', 'answer yes to confirmations'),
  cache: negate('--no-cache', 'neither read nor write the reference-data cache'),
  refresh: flag('--refresh', 'fetch reference data anew and store it in the cache'),
  wide: flag('--wide', 'tables: every column, nothing cut'),
};

/** The globals that change CSV only: listed in the help of the commands that can write CSV. */
export const CSV_OPTIONS: ReadonlySet<keyof typeof GLOBAL_OPTIONS> = new Set(['bom', 'formulaGuard']);

export const FIELDS_TWICE = 'give the fields once (--fields or --json a,b,c).';

export type GlobalOptions = Partial<InferOptions<typeof GLOBAL_OPTIONS>>;
