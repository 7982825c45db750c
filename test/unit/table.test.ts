import { describe, expect, it } from 'vitest';
import {
  type ColumnLayout,
  displayWidth,
  fitColumns,
  layoutTable,
  omittedNote,
  renderPairs,
  renderTable,
  wrapText,
} from '../../src/output/table.js';

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

// Fitting a table to a terminal: priorities, identifiers whole, wrapping.
const UUID = '8ebc7731-0fe2-467e-8ce2-6b8745680801';
const lines = (t: string) => t.trimEnd().split('\n');
const widest = (t: string) => Math.max(...lines(t).map(displayWidth));
const lay = (...a: Parameters<typeof layoutTable>) => {
  const r = layoutTable(...a);
  return { text: r.text.text, omitted: r.omitted };
};

describe('layoutTable at a terminal width', () => {
  const cols: ColumnLayout[] = [
    { header: 'Code', priority: 1, fit: 'keep' },
    { header: 'Description', priority: 2 },
    { header: 'ID', priority: 3, fit: 'keep' },
  ];
  const rows = [
    ['S83.201A', 'Tear of unspecified meniscus, current injury, right knee, initial encounter', UUID],
    ['S83.201D', 'Tear of unspecified meniscus, current injury, right knee, subsequent encounter', UUID],
  ];

  it('keeps identifiers whole and wraps the description under its column, within the width', () => {
    const { text, omitted } = lay(cols, rows, { color: false, width: 80 });
    expect(omitted).toEqual([]);
    expect(widest(text)).toBeLessThanOrEqual(80);
    expect(text).not.toContain('…');
    expect(text.split(UUID)).toHaveLength(3); // both ids whole
    const l = lines(text);
    expect(l[0]).toMatch(/^CODE {6}DESCRIPTION +ID$/);
    expect(l[1]).toMatch(new RegExp(`^S83\\.201A  Tear of unspecified meniscus, +${UUID}$`));
    // Continuation lines start under the description, the code and id cells empty.
    expect(l[2]).toBe('          current injury, right knee,');
    expect(l[3]).toBe('          initial encounter');
    // Every word is there, in order: nothing was cut.
    const desc = l
      .slice(1, 4)
      .map((x) => x.slice(10, 10 + 32).trim())
      .join(' ');
    expect(desc).toBe(rows[0]![1]);
  });

  it('leaves out the lowest-priority columns that do not fit, and says which', () => {
    const { text, omitted } = lay(cols, rows, { color: false, width: 50 });
    expect(omitted).toEqual(['ID']);
    expect(text).not.toContain('ID\n');
    expect(text).not.toContain(UUID);
    expect(widest(text)).toBeLessThanOrEqual(50);
  });

  it('never cuts a keep column: it is shown whole or not at all', () => {
    for (let width = 10; width <= 120; width++) {
      const { text } = lay(cols, rows, { color: false, width });
      expect(text.includes(UUID) || !text.includes('8ebc')).toBe(true);
      if (text.includes('ID')) expect(text.split(UUID)).toHaveLength(3);
    }
  });

  it('takes a lower-priority column that still fits when a higher one does not', () => {
    const c: ColumnLayout[] = [
      { header: 'A', priority: 1, fit: 'keep' },
      { header: 'Wide', priority: 2, fit: 'keep' },
      { header: 'N', priority: 3, fit: 'keep' },
    ];
    const { text, omitted } = lay(c, [['a', 'w'.repeat(40), 'n']], { color: false, width: 20 });
    expect(omitted).toEqual(['Wide']);
    expect(lines(text)).toEqual(['A  N', 'a  n']);
  });

  it('orders by priority, not position, and keeps the table order on screen', () => {
    const natural = [10, 30, 36];
    const fit = fitColumns(
      [
        { header: 'x', priority: 3 },
        { header: 'y', priority: 2 },
        { header: 'z', priority: 1, fit: 'keep' },
      ],
      ['X', 'Y', 'Z'],
      natural,
      60,
    );
    expect(fit.shown).toEqual([1, 2]);
    expect(fit.widths[1]).toBe(22); // 60 - 36 - the gap
  });

  it('piped (no width) and --wide: every column, each cell whole on one line', () => {
    const { text, omitted } = lay(cols, rows, { color: false, width: undefined });
    expect(omitted).toEqual([]);
    expect(lines(text)).toHaveLength(3);
    expect(text).toContain(rows[1]![1]);
  });

  it('counts wide characters as two cells and escapes as the text they show', () => {
    const c: ColumnLayout[] = [
      { header: 'Name', priority: 1 },
      { header: 'ID', priority: 2, fit: 'keep' },
    ];
    const r = [
      ['張王李趙律師事務所張王李趙律師事務所', 'id-1'],
      ['👍👍👍👍👍👍👍👍👍👍👍👍', 'id-2'],
      ['evil\u202Eevil\u202Eevil\u202Eevil', 'id-3'],
    ];
    const { text } = lay(c, r, { color: false, width: 26 });
    for (const l of lines(text)) expect(displayWidth(l)).toBeLessThanOrEqual(26);
    // The ids line up: the name column is 20 cells wide whatever the characters.
    expect(
      lines(text)
        .filter((l) => /id-\d$/.test(l))
        .map((l) => displayWidth(l)),
    ).toEqual([26, 26, 26]);
    // An escape is never split across lines.
    expect(text).not.toMatch(/<U\+20\n|<U\n/);
    expect(text.match(/<U\+202E>/g)).toHaveLength(3);
  });

  it('colours only the header text, not its padding', () => {
    const { text } = lay(cols, rows, { color: true, width: 80 });
    expect(lines(text)[0]).toBe(
      '\u001b[1mCODE\u001b[22m      \u001b[1mDESCRIPTION\u001b[22m' +
        ' '.repeat(23) +
        '\u001b[1mID\u001b[22m',
    );
  });
});

describe('wrapText', () => {
  it.each<[string, number, string[]]>([
    ['Tear of unspecified meniscus', 12, ['Tear of', 'unspecified', 'meniscus']],
    ['without_and_with_contrast', 10, ['without_', 'and_with_', 'contrast']],
    ['without_and_with_contrast more words', 10, ['without_', 'and_with_', 'contrast', 'more words']],
    ['****oken (IMAGING_TOKEN)', 22, ['****oken', '(IMAGING_TOKEN)']], // a name fits whole: not broken at _
    ['MRI Knee without_contrast', 20, ['MRI Knee', 'without_contrast']],
    ['Johnson, Ana-Lucía', 12, ['Johnson,', 'Ana-Lucía']],
    ['abcdefghij', 4, ['abcd', 'efgh', 'ij']],
    ['張王李趙', 5, ['張王', '李趙']],
    ['e\u0301e\u0301e\u0301', 2, ['e\u0301e\u0301', 'e\u0301']], // combining marks stay with their letter
    ['a<U+202E>b', 4, ['a', '<U+202E>', 'b']],
    ['short', 10, ['short']],
  ])('%j in %i cells', (text, width, expected) => {
    expect(wrapText(text, width)).toEqual(expected);
  });
});

describe('a keep column wider than the terminal (a hostile "code")', () => {
  it('wraps rather than push every other column out', () => {
    const c: ColumnLayout[] = [
      { header: 'Code', priority: 1, fit: 'keep' },
      { header: 'ID', priority: 2, fit: 'keep' },
    ];
    const { text, omitted } = lay(c, [[`73721${'x'.repeat(100)}`, UUID]], { color: false, width: 80 });
    expect(omitted).toEqual([]);
    expect(widest(text)).toBeLessThanOrEqual(80);
    expect(text).toContain(UUID);
    expect(lines(text).join('').replace(UUID, '').replace(/ /g, '')).toBe(`CODEID73721${'x'.repeat(100)}`);
  });
});

describe('the note naming left-out columns stays one line', () => {
  it('names the columns; as many as fit and how many more; or counts them', () => {
    const names = ['Line of business', 'Visits', 'Most advanced visit'];
    expect(omittedNote(names)).toBe(
      'Left out: Line of business, Visits, Most advanced visit (--wide shows all)',
    );
    expect(omittedNote(names, 80)).toBe(
      'Left out: Line of business, Visits, Most advanced visit (--wide shows all)',
    );
    // As many names as fit, then how many more.
    expect(omittedNote(names, 60)).toBe('Left out: Line of business and 2 more (--wide shows all)');
    expect(omittedNote([...names, 'ID'], 66)).toBe(
      'Left out: Line of business, Visits and 2 more (--wide shows all)',
    );
    // Not even one name fits: the count.
    expect(omittedNote(names, 40)).toBe('Left out: 3 columns (--wide shows all)');
    for (const w of [40, 60, 66, 80, 120]) expect(omittedNote(names, w).length).toBeLessThanOrEqual(w);
  });
});
