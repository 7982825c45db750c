import { commandTarget } from './commands/globals.js';
import { UsageError } from './errors.js';
import { COMMANDS } from './registry.js';

/**
 * Flags people reach for that this tool never takes, because their value would be a secret in
 * argv (visible in `ps`, shell history, CI logs). Caught before parsing, so the message never
 * quotes the value (commander's "unknown option '--secret=…'" would), and names what to use.
 */
const SECRET_FLAGS: ReadonlyArray<[RegExp, string, string | ((command: string | undefined) => string)]> = [
  [
    /^--(?:webhook-)?secret$/,
    'the webhook secret is never given as a flag (it would show in ps and shell history)',
    // The flag that does take it, as the command in argv spells it.
    (command) =>
      command === 'mock'
        ? 'Use --webhook-secret-file FILE, or set IMAGING_WEBHOOK_SECRET; on a terminal, leave both out to be asked.'
        : command === 'webhook'
          ? 'Use --secret-file FILE, or set IMAGING_WEBHOOK_SECRET; on a terminal, leave both out to be asked.'
          : 'Only the webhook commands (--secret-file FILE) and imaging mock (--webhook-secret-file FILE) take a secret, from a file or IMAGING_WEBHOOK_SECRET.',
  ],
  [
    /^--(?:api-)?token$/,
    'the API token is never given as a flag (it would show in ps and shell history)',
    'Store it once: imaging auth login (it asks, hidden) or imaging auth login --with-token < token.txt; or set IMAGING_TOKEN.',
  ],
];

/** A usage error for a secret passed as a flag (`--secret x`, `--secret=x`, `--token …`), else nothing. */
export function secretFlagMisuse(argv: readonly string[]): UsageError | undefined {
  for (const a of argv) {
    if (a === '--') return undefined;
    const name = a.split('=', 1)[0]!;
    for (const [re, message, hint] of SECRET_FLAGS)
      if (re.test(name))
        return new UsageError(message, typeof hint === 'string' ? hint : hint(commandTarget(argv)));
  }
  return undefined;
}

/**
 * A group's verb given without its group (`imaging notifications`): commander only says "unknown
 * command"; this names the command meant (`imaging referrals notifications`), for every verb of
 * the registry. Undefined when the word is a command or group of its own, or no verb.
 */
export function verbWithoutGroup(argv: readonly string[]): UsageError | undefined {
  const word = commandTarget(argv);
  if (word === undefined || COMMANDS.some((c) => c.path[0] === word)) return undefined;
  const meant = COMMANDS.filter((c) => c.path.length === 2 && c.path[1] === word).map(
    (c) => `imaging ${c.path.join(' ')}`,
  );
  if (meant.length === 0) return undefined;
  const list =
    meant.length === 1 ? meant[0] : `${meant.slice(0, -1).join(', ')} or ${meant[meant.length - 1]}`;
  return new UsageError(`unknown command '${word}'`, `Did you mean ${list}? (${word} is a verb of a group)`);
}
