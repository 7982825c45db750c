import { describe, expect, it } from 'vitest';
import { displayWidth, fitWidths, renderPairs, renderTable, truncate } from '../../src/output/table.js';

// The renderers return SafeText (only output/text.ts makes one); the tests read its text.
const table = (...a: Parameters<typeof renderTable>) => renderTable(...a).text;
const pairs = (...a: Parameters<typeof renderPairs>) => renderPairs(...a).text;

describe('displayWidth', () => {
  it.each([
    ['abc', 3],
    ['Müller', 6],
    ['Nguyễn', 6],
    ['e\u0301', 1], // e + combining acute
    ['張王李', 6],
    ['👍', 2],
    ['', 0],
  ])('%j is %i cells', (s, w) => {
    expect(displayWidth(s)).toBe(w);
  });
});

describe('renderTable', () => {
  it('aligns columns by terminal cells, with no trailing spaces', () => {
    const out = table(
      ['name', 'state'],
      [
        ['Zhāng, Wáng & Lǐ', 'CA'],
        ['張王李', 'NY'],
        ['plain', null],
      ],
      { color: false, width: undefined },
    );
    const lines = out.trimEnd().split('\n');
    expect(lines).toEqual([
      'NAME              STATE',
      'Zhāng, Wáng & Lǐ  CA',
      '張王李            NY',
      'plain             -',
    ]);
  });

  it('cuts the widest column to fit a terminal and marks the cut', () => {
    const out = table(['a', 'b'], [['x'.repeat(50), 'short']], { color: false, width: 30 });
    const row = out.split('\n')[1]!;
    expect(displayWidth(row)).toBeLessThanOrEqual(30);
    expect(row).toContain('…');
  });

  it('keeps server text on one line with no control characters', () => {
    const out = table(['notes'], [['line one\nline two\u001b[31m']], {
      color: false,
      width: undefined,
    });
    expect(out).toBe('NOTES\nline one line two\u241b[31m\n');
  });

  it('makes headers bold only with colour', () => {
    expect(table(['a'], [['1']], { color: true, width: undefined })).toContain('\u001b[1mA\u001b[22m');
    expect(table(['a'], [['1']], { color: false, width: undefined })).not.toContain('\u001b');
  });
});

describe('helpers', () => {
  it('fitWidths never goes below six cells', () => {
    expect(fitWidths([40, 40], 20)).toEqual([9, 9]);
    expect(fitWidths([10, 10], 100)).toEqual([10, 10]);
  });
  it('truncate keeps wide characters whole', () => {
    expect(truncate('張王李趙', 5)).toBe('張王…');
  });
  it('renderPairs aligns labels', () => {
    expect(
      pairs(
        [
          ['ID', 'x'],
          ['Status', null],
        ],
        { color: false },
      ),
    ).toBe('ID:      x\nStatus:  -\n');
  });
});
