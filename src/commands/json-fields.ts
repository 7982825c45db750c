import { selectableNames } from '../output/fields.js';
import { COMMANDS, GROUPS } from '../registry.js';
import { GLOBAL_OPTIONS } from './globals.js';
import { takesValue } from './options.js';

/**
 * `--json a,b,c` is `--json --fields a,b,c`. Commander has no "maybe a value" option, and the word
 * after a bare `--json` may be the command's own argument (`imaging cpt --json 73721`,
 * `imaging referrals get --json ID`), so the arguments are rewritten before commander reads them:
 *
 * - `--json=a,b` always carries fields;
 * - `--json WORD` before the command's name: WORD is fields when it is not a command name (a
 *   group's verb is not: `imaging --json status referrals list` picks the field `status`);
 * - `--json WORD` after it: WORD is fields when it holds a comma (for a command without fields:
 *   when it reads as a list of names, a,b), when each of its names is a field of the command (or a
 *   `+name`), or when the command takes no argument at all; otherwise
 *   it is left to the command. So `imaging icd10 --json code` is the field `code`; to search for
 *   "code", put the query first (`imaging icd10 code --json`).
 */
export async function expandJsonFields(argv: readonly string[]): Promise<string[]> {
  if (!argv.some((a) => a === '--json' || a.startsWith('--json='))) return [...argv];
  const valued = new Set(
    Object.values(GLOBAL_OPTIONS)
      .filter(takesValue)
      .flatMap((o) => o.flags.match(/-{1,2}[\w-]+/g) ?? []),
  );
  const groups = new Set(GROUPS.map((g) => g.name));
  const tops = new Set(COMMANDS.map((c) => c.path[0]!));
  const words: string[] = [];
  // Indexes of the word after a bare --json, and whether the command's name was known by then.
  const candidates: Array<{ index: number; afterCommand: boolean }> = [];
  const complete = () => words.length === 2 || (words.length === 1 && !groups.has(words[0]!));
  const expectsName = (w: string) =>
    words.length === 0
      ? tops.has(w) || w === 'help'
      : groups.has(words[0]!) && words.length === 1
        ? COMMANDS.some((c) => c.path[0] === words[0] && c.path[1] === w)
        : false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '--json') {
      const next = argv[i + 1];
      if (next !== undefined && next !== '--' && !next.startsWith('-') && !expectsName(next)) {
        candidates.push({ index: i + 1, afterCommand: complete() });
        i++;
      }
      continue;
    }
    if (a.startsWith('-')) {
      if (valued.has(a)) i++;
      continue;
    }
    if (!complete()) words.push(a);
  }
  let names: Set<string> | undefined;
  let takesArgs = true;
  const entry = COMMANDS.find(
    (c) => c.path.length === words.length && c.path.every((w, i) => words[i] === w),
  );
  if (entry) {
    const def = (await entry.load()).default;
    names = def.fields ? selectableNames(def.fields.flatMap((s) => s.fields)) : undefined;
    takesArgs = (def.args?.length ?? 0) > 0;
  }
  const isFields = (word: string, afterCommand: boolean) => {
    // Before the command's name, unless no command follows (`imaging --json notifications` is the
    // verb without its group, and says so).
    if (!afterCommand) return words.length > 0;
    if (!takesArgs) return true;
    // A command without fields: a word that reads as a field list (status,ms) is one, so the
    // answer is "--fields is not available", not commander's "too many arguments"; a path with
    // a comma in its query (imaging api --json '/referrals?x=a,b') stays the argument.
    if (!names) return /^\+?[\w.-]+(\s*,\s*\+?[\w.-]+)+$/.test(word);
    if (word.includes(',')) return true;
    return word.split(',').every((n) => n.trim().startsWith('+') || names.has(n.trim()));
  };
  const out: string[] = [];
  const at = new Map(candidates.map((c) => [c.index, c.afterCommand]));
  let rest = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (rest || a === '--') {
      rest = true;
      out.push(a);
      continue;
    }
    if (a.startsWith('--json=')) {
      out.push('--json', '--fields', a.slice('--json='.length));
      continue;
    }
    const after = at.get(i + 1);
    if (a === '--json' && after !== undefined && isFields(argv[i + 1]!, after)) {
      out.push('--json', '--fields', argv[i + 1]!);
      i++;
      continue;
    }
    out.push(a);
  }
  return out;
}
