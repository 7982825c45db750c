/**
 * Word-wrapping of the tool's own prose (help, notes, hints, warnings, the error block) to the
 * terminal's width, so a line never breaks mid-word at the terminal's edge. Words longer than the
 * width (a URL, a path, an id) are never split: they stay whole on a line of their own, so they can
 * still be copied.
 */

const SGR = /\u001b\[[0-9;]*m/g;

/** Cells a string takes (wide characters count two; the tool's own colour codes none). */
export function cells(s: string): number {
  let n = 0;
  for (const ch of s.includes('\u001b') ? s.replace(SGR, '') : s)
    n += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uff60\uffe0-\uffe6]/.test(ch) ? 2 : 1;
  return n;
}

/** Word-wraps each line to `width`, continuation lines keeping the line's own indentation. */
export function wrapProse(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => wrapLine(line, width, /^ */.exec(line)![0]))
    .join('\n');
}

/**
 * A message line wrapped to `width`: continuation lines are indented under the text that follows a
 * leading label (`error: `, `warning: `, `hint: `, `  Location: `), else under the line's own
 * indentation. Colour codes (the tool's own SGR) count no cells and are never split.
 */
export function wrapMessage(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => {
      const label = /^( *(?:[A-Za-z][\w -]{0,20}): +)\S/.exec(line.replace(SGR, ''))?.[1];
      return wrapLine(line, width, ' '.repeat(label ? cells(label) : /^ */.exec(line)![0].length));
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
