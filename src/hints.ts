import { UsageError } from './errors.js';
import { COMMANDS } from './registry.js';
import { nearest } from './util/suggest.js';

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

/**
 * The command meant by a group's verb this tool spells another way, as a hint; undefined for none.
 * A typo of such a verb too (`serach`): one edit, or two in a longer word.
 */
export function verbSynonym(group: string, word: string): string | undefined {
  const verbs = Object.hasOwn(VERB_SYNONYMS, group) ? VERB_SYNONYMS[group] : undefined;
  if (!verbs) return undefined;
  const w = word.toLowerCase();
  const key = Object.hasOwn(verbs, w) ? w : nearest(w, Object.keys(verbs), (k) => (k.length > 4 ? 2 : 1));
  return key ? `Did you mean imaging ${group} ${verbs[key]}?` : undefined;
}

/** Flags people bring from other tools that a command spells another way: the hint names its own. */
const OPTION_SYNONYMS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'referrals download': {
    '-o': 'referrals download saves into a folder: -D, --dir DIR (each file is named from its referral).',
    '--output':
      'referrals download saves into a folder: -D, --dir DIR (each file is named from its referral).',
  },
};

/** The hint for a flag `command` spells another way (`download -o`: `-D`); undefined for none. */
export function optionSynonym(command: string, name: string): string | undefined {
  const flags = Object.hasOwn(OPTION_SYNONYMS, command) ? OPTION_SYNONYMS[command] : undefined;
  return flags && Object.hasOwn(flags, name) ? flags[name] : undefined;
}
