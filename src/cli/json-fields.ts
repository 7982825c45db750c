import { selectableNames } from '../output/fields.js';
import type { AnyCommand } from './define.js';

// The word after a bare `--json`: a field list (`--json a,b`) or the command's own (`cpt --json 73721`).
export function jsonTakes(
  word: string,
  rest: readonly string[],
  at: { commands: readonly string[] } | { def: AnyCommand },
): boolean {
  if ('commands' in at) return !at.commands.includes(word) && rest.some((w) => at.commands.includes(w));
  const { def } = at;
  if ((def.args?.length ?? 0) === 0) return true;
  // A path with a comma in its query (imaging api --json '/referrals?x=a,b') stays the argument.
  if (!def.fields) return /^\+?[\w.-]+(\s*,\s*\+?[\w.-]+)+$/.test(word);
  if (word.includes(',')) return true;
  const names = selectableNames(def.fields.flatMap((s) => s.fields));
  return word.startsWith('+') || names.has(word.trim());
}
