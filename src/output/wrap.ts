// The tool's own prose wrapped to the terminal's width, so a line never breaks mid-word at its edge.

const SGR = /\u001b\[[0-9;]*m/g;

/** Cells a string takes (the tool's own colour codes none). */
export function cells(s: string): number {
  return displayWidth(s.includes('\u001b') ? s.replace(SGR, '') : s);
}

// East Asian Wide and Fullwidth (Tangut, Kana Supplement and the like included) and emoji take two
// cells. Built on first use (ICU makes a property's tables with the pattern): ASCII never needs them.
let zeroWidth: RegExp | undefined;
let wide: RegExp | undefined;
const ZERO_WIDTH = () => (zeroWidth ??= /[\p{Mn}\p{Me}\p{Cf}]/u);
const WIDE = () =>
  (wide ??=
    /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE10-\uFE19\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{16FE0}-\u{16FE4}\u{17000}-\u{18CD5}\u{18D00}-\u{18D08}\u{1AFF0}-\u{1B2FF}\u{1F200}-\u{1F251}\p{Extended_Pictographic}\u{20000}-\u{3FFFD}]/u);

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Terminal cells a string takes: 0 for combining marks, 2 for wide (CJK, emoji), else 1. */
export function displayWidth(s: string): number {
  if (PRINTABLE_ASCII.test(s)) return s.length;
  const zero = ZERO_WIDTH();
  const twoCells = WIDE();
  let w = 0;
  for (const ch of s) {
    if (zero.test(ch)) continue;
    w += twoCells.test(ch) ? 2 : 1;
  }
  return w;
}

/** `s` cut to `width` cells, an ellipsis in the last one when it is cut (wide characters kept whole). */
export function cutToWidth(s: string, width: number): string {
  if (displayWidth(s) <= width) return s;
  let out = '';
  let used = 0;
  for (const ch of s) {
    const w = displayWidth(ch);
    if (used + w > width - 1) break;
    out += ch;
    used += w;
  }
  return `${out}\u2026`;
}

/** Word-wraps each line to `width`, continuation lines keeping the line's own indentation. */
export function wrapProse(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => wrapLine(line, width, /^ */.exec(line)![0]))
    .join('\n');
}

// A message line wrapped to `width`: continuation lines are indented under the text that follows a leading
// label (`error: `, `warning: `, `hint: `, ` Location: `), else under the line's own indentation.
export function wrapMessage(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => {
      const label = /^( *(?:[A-Za-z][\w -]{0,20}): +)\S/.exec(line.replace(SGR, ''))?.[1];
      const indent = ' '.repeat(label ? cells(label) : /^ */.exec(line)![0].length);
      return wrapCommand(line, width, indent) ?? wrapLine(line, width, indent);
    })
    .join('\n');
}

function wrapLine(line: string, width: number, indent: string): string {
  if (cells(line) <= width || width < 20) return line;
  const lead = /^ */.exec(line)![0];
  const out: string[] = [];
  let current = '';
  // Words with the spaces before them, so aligned columns (`docs:       https://…`) keep their spacing.
  for (const [token] of line.slice(lead.length).matchAll(/ *\S+/g)) {
    const word = token.trimStart();
    const next = current ? `${current}${token}` : `${out.length === 0 ? lead : indent}${word}`;
    // A long word (a URL) goes on a line of its own, unindented if only that way it fits; one too
    // long for any line stays where it is: a line of its own would gain nothing.
    if (current && cells(next) > width && cells(word) <= width) {
      out.push(current);
      current = cells(indent) + cells(word) <= width ? `${indent}${word}` : word;
    } else current = next;
  }
  if (current) out.push(current);
  return out.join('\n');
}

// A command to copy (`hint: Run: imaging …`) too wide for the terminal: broken between shell words with a
// ` \` ending each line, so the lines pasted into a shell still run as one command.
function wrapCommand(line: string, width: number, indent: string): string | undefined {
  if (cells(line) <= width || width < 20 || line.includes('\u001b')) return undefined;
  const m =
    /^( *(?:[A-Za-z][\w -]{0,40}: +)+)(imaging(?: +(?:[^\s;,]|[;,](?! ))+)*?)((?: {2,}| +\(|[;,] ).*)?$/.exec(
      line,
    );
  if (!m) return undefined;
  const [, label = '', command = '', rest] = m;
  const words = shellWords(command);
  // A quote left open: not a command a shell would take; wrapped as prose.
  if (words === undefined) return undefined;
  const cont = `${indent}    `;
  const out: string[] = [];
  let current = label;
  let first = true;
  for (const word of words) {
    const next = first ? current + word : `${current} ${word}`;
    if (!first && cells(next) + 2 > width) {
      out.push(`${current} \\`);
      current = `${cont}${word}`;
    } else current = next;
    first = false;
  }
  if (rest) {
    // A `;` or `,` that ends the command stays on its line.
    const stop = /^[;,]/.exec(rest)?.[0] ?? '';
    current += stop;
    const tail = rest.slice(stop.length).trimStart();
    out.push(current);
    out.push(wrapLine(`${indent}${tail}`, width, indent));
  } else out.push(current);
  return out.join('\n');
}

/** Shell words of a command line, quotes kept whole; undefined when a quote is left open. */
export function shellWords(line: string): string[] | undefined {
  const words: string[] = [];
  let current = '';
  let quote: string | undefined;
  let escaped = false;
  for (const ch of line) {
    if (escaped) {
      current += ch;
      escaped = false;
    } else if (quote) {
      current += ch;
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"') escaped = true;
    } else if (ch === '\\') {
      current += ch;
      escaped = true;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      current += ch;
    } else if (ch === ' ') {
      if (current) words.push(current);
      current = '';
    } else current += ch;
  }
  if (quote || escaped) return undefined;
  if (current) words.push(current);
  return words;
}
