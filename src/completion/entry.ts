import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { complete, formatCompletion } from './complete.js';
import type { CompletionTable } from './table.js';

// `imaging __complete WORD… =CURRENT`, answered from dist/completion.json before the CLI bundle loads.
export function answer(args: readonly string[], dir: string, write: (s: string) => void): void {
  let table: CompletionTable;
  try {
    table = JSON.parse(readFileSync(join(dir, 'completion.json'), 'utf8')) as CompletionTable;
  } catch {
    return; // no table (an unbuilt checkout) or a damaged one: no candidates
  }
  answerFrom(table, args, write);
}

/** The same from a table in hand (the single executable carries its own). */
export function answerFrom(
  table: CompletionTable,
  args: readonly string[],
  write: (s: string) => void,
): void {
  try {
    const words = [...args];
    const last = words.pop() ?? '=';
    words.push(last.startsWith('=') ? last.slice(1) : last);
    write(formatCompletion(complete(table, words)));
  } catch {
    // a damaged table: no candidates
  }
}
