import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';

// Examples are wrapped with shell line continuations (` \`), so they still paste and run.

export { cells, wrapProse } from '../output/wrap.js';

import { cells, shellWords, wrapProse } from '../output/wrap.js';
import { STANDALONE } from '../version.js';

/** Help text with every line that is too wide word-wrapped, but for the `Docs:` line (a path). */
export function fitHelpText(text: string, width: number): string {
  if (text.split('\n').every((l) => cells(l) <= width)) return text;
  return text
    .split('\n')
    .map((l) => (l.startsWith('Docs: ') ? l : wrapProse(l, width)))
    .join('\n');
}

/** Splits `cmd   # comment` (two or more spaces before the #) into its parts. */
function splitComment(line: string): { command: string; comment?: string } {
  const m = /^(.*?\S) {2,}(# .*)$/.exec(line);
  return m ? { command: m[1]!, comment: m[2]! } : { command: line };
}

// One example at `indent`, fitted to `width`: as it is when it fits; else its comment on the line above and
// the command continued over lines ending in ` \`, which a shell reads as one line.
export function fitExample(example: string, width: number, indent = '  '): string {
  if (cells(indent + example) <= width) return indent + example;
  const { command, comment } = splitComment(example);
  const lines: string[] = comment ? [indent + comment] : [];
  let current = indent;
  for (const word of shellWords(command) ?? command.split(/ +/)) {
    const first = current.trim() === '';
    const next = first ? current + word : `${current} ${word}`;
    // Room for the ` \` that ends a continued line.
    if (!first && cells(next) + 2 > width) {
      lines.push(`${current} \\`);
      current = `${indent}    ${word}`;
    } else current = next;
  }
  lines.push(current);
  return lines.join('\n');
}

// The package's README.md beside the installed bundle, when it is there.
function readmePath(): string | undefined {
  // The bundle's folder (dist/); under the test runner, the source folder (src/help/).
  const here = typeof __dirname === 'string' ? __dirname : undefined;
  if (!here) return undefined;
  const candidates = [join(dirname(here), 'README.md'), join(dirname(dirname(here)), 'README.md')];
  return candidates.find((candidate) => statSync(candidate, { throwIfNoEntry: false })?.isFile());
}

/** The help's last lines: the README where it is installed, and help on one command. */
export function docsLine(): string {
  const one = 'One command in full: imaging help COMMAND [VERB]';
  // The single executable has no README beside it: it says where the README is instead.
  if (STANDALONE) return `Docs: README.md, published with this binary and in the npm package\n${one}`;
  const readme = readmePath();
  return readme ? `Docs: ${readme}\n${one}` : one;
}
