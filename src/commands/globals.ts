import { FORMATS } from '../output/format.js';
import { flag, type InferOptions, int, negate, takesValue, text } from './options.js';

/**
 * The options every command accepts, before or after the subcommand: the one list the program's
 * options, `GlobalOptions` and the argv pre-scan (which word names the command) all come from.
 * Adding a global option is one line here.
 */
export const GLOBAL_OPTIONS = {
  env: text('--env <name>', 'environment: sandbox, production or local'),
  baseUrl: text('--base-url <url>', 'API base URL (the part before /api/v2)'),
  format: text('--format <format>', `output format: ${FORMATS.join(', ')}`),
  json: flag('--json', 'same as --format json'),
  timeout: int('--timeout <ms>', 'per-request timeout in milliseconds (default 30000)', { max: 3_600_000 }),
  verbose: flag('--verbose', 'HTTP trace on stderr (never the token or bodies)'),
  color: negate('--no-color', 'no colour in output'),
  yes: flag('-y, --yes', 'answer yes to confirmations'),
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
