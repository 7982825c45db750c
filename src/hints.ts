import { UsageError } from './errors.js';
import { COMMANDS } from './registry.js';

/**
 * Hints for what the parser refuses, in the words of this tool: the parser (program.ts) calls
 * these with the name of what it did not know, never with an option's value.
 */

/**
 * Flags people reach for that this tool never takes, because their value would be a secret in
 * argv (visible in `ps`, shell history, CI logs): the message names what to use instead.
 */
const SECRET_FLAGS: ReadonlyArray<[RegExp, string, string | ((command: string) => string)]> = [
  [
    /^--(?:webhook-)?secret$/,
    'the webhook secret is never given as a flag (it would show in ps and shell history)',
    // The flag that does take it, as the command spells it.
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

/** A usage error for an unknown flag that would carry a secret (`--secret`, `--token`), else nothing. */
export function secretFlagMisuse(name: string, command: string): UsageError | undefined {
  for (const [re, message, hint] of SECRET_FLAGS)
    if (re.test(name)) return new UsageError(message, typeof hint === 'string' ? hint : hint(command));
  return undefined;
}

/**
 * A group's verb given without its group (`imaging notifications`): the commands meant
 * (`imaging referrals notifications`), for every verb of the registry; undefined for no verb.
 */
export function verbWithoutGroup(word: string): string | undefined {
  const meant = COMMANDS.filter((c) => c.path.length === 2 && c.path[1] === word).map(
    (c) => `imaging ${c.path.join(' ')}`,
  );
  if (meant.length === 0) return undefined;
  const list =
    meant.length === 1 ? meant[0] : `${meant.slice(0, -1).join(', ')} or ${meant[meant.length - 1]}`;
  return `Did you mean ${list}? (${word} is a verb of a group)`;
}

/** Verbs people reach for that this tool spells another way: `referrals search` is `referrals find`. */
const VERB_SYNONYMS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  referrals: { search: 'find', lookup: 'find' },
};

/** The command meant by a group's verb this tool spells another way, as a hint; undefined for none. */
export function verbSynonym(group: string, word: string): string | undefined {
  const verbs = Object.hasOwn(VERB_SYNONYMS, group) ? VERB_SYNONYMS[group] : undefined;
  const w = word.toLowerCase();
  return verbs && Object.hasOwn(verbs, w) ? `Did you mean imaging ${group} ${verbs[w]}?` : undefined;
}
