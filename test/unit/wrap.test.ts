import { describe, expect, it } from 'vitest';
import { cells, wrapMessage, wrapProse } from '../../src/output/wrap.js';

describe('messages wrapped to the terminal', () => {
  it('breaks between words, continuation lines under the text after the label', () => {
    const text =
      'warning: 300 referrals were read but no row was written (no visit has status nothing_here): the file holds only the header.';
    const out = wrapMessage(text, 80).split('\n');
    expect(out).toEqual([
      'warning: 300 referrals were read but no row was written (no visit has status',
      '         nothing_here): the file holds only the header.',
    ]);
    for (const l of out) expect(cells(l)).toBeLessThanOrEqual(80);
    expect(out.join(' ').replace(/ +/g, ' ')).toBe(text);
  });

  it('keeps the spacing of aligned columns and never splits a long word', () => {
    const url = `https://example.invalid/${'x'.repeat(50)}`;
    const out = wrapMessage(`  docs:       ${url}`, 80).split('\n');
    // Too long beside its label: a line of its own, whole.
    expect(out).toEqual(['  docs:', url]);
    const huge = `https://example.invalid/${'y'.repeat(100)}`;
    expect(wrapMessage(`  docs:       ${huge}`, 80)).toBe(`  docs:       ${huge}`);
  });

  it("counts wide characters as two cells and the tool's colour codes as none", () => {
    expect(cells('法律')).toBe(4);
    expect(cells('\u001b[31;1merror:\u001b[22;39m')).toBe(6);
    const out = wrapMessage(`\u001b[33mhint:\u001b[39m ${'word '.repeat(30).trim()}`, 40).split('\n');
    for (const l of out) expect(cells(l)).toBeLessThanOrEqual(40);
    expect(out[1]!.startsWith('      word')).toBe(true); // under the text after "hint: "
  });

  it('leaves short lines and narrow widths alone; prose keeps its own indentation', () => {
    expect(wrapMessage('error: short', 80)).toBe('error: short');
    expect(wrapMessage('a '.repeat(40), 10)).toBe('a '.repeat(40));
    expect(
      wrapProse(`    ${'abc '.repeat(30).trim()}`, 40)
        .split('\n')[1]!
        .startsWith('    abc'),
    ).toBe(true);
  });
});
