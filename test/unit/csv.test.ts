import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvCell, csvRow, flatten, unionKeys } from '../../src/output/csv.js';
import '../reliability.js';
import { anyText } from './any-text.js';

describe('csvCell', () => {
  it('quotes commas, quotes and line breaks (RFC 4180)', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line1\nline2')).toBe('"line1\nline2"');
    expect(csvCell('plain')).toBe('plain');
  });
  it('guards cells that a spreadsheet would run as a formula', () => {
    for (const s of ['=SUM(A1)', '+1', '-2', '@cmd', '\tx', '\rx'])
      expect(csvCell(s).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
  });
  it('guards the signs after leading white space or invisible characters, and their look-alikes', () => {
    const lead = [' ', '\u00a0', '\n', '\u200b', '\ufeff', '\u3000', '  \u200b '];
    // Bidi marks and isolates, soft hyphen, combining grapheme joiner, variation selector.
    lead.push('\u200e', '\u200f', '\u00ad', '\u202a', '\u2066', '\u034f', '\ufe0f');
    for (const l of lead)
      for (const sign of ['=', '+', '-', '@'])
        expect(csvCell(`${l}${sign}1+1`).replace(/^"/, '')).toMatch(/^'/);
    for (const sign of [
      '\uff1d',
      '\uff0b',
      '\uff0d',
      '\uff20',
      '\ufe66',
      '\ufe62',
      '\ufe63',
      '\ufe6b',
      '\u2212',
    ])
      expect(csvCell(`${sign}SUM(1+1)`)).toBe(`'${sign}SUM(1+1)`);
    expect(csvCell(' plain')).toBe(' plain');
    expect(csvCell('a=b')).toBe('a=b');
  });
  it('guards header rows like cells', () => {
    expect(csvRow(['=HYPERLINK("http://evil.example","x")', '@SUM(1+1)', 'id'])).toBe(
      `"'=HYPERLINK(""http://evil.example"",""x"")",'@SUM(1+1),id\r\n`,
    );
  });
  it('leaves numbers alone and can switch the guard off', () => {
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell('=1+1', false)).toBe('=1+1');
  });
  it('writes null as empty and objects as JSON', () => {
    expect(csvCell(null)).toBe('');
    expect(csvCell(['a', 'b'])).toBe('"[""a"",""b""]"');
  });
  it('ends rows with CRLF', () => {
    expect(csvRow(['a', 1, null])).toBe('a,1,\r\n');
  });
});

describe('flatten', () => {
  it('uses dotted keys for nested objects and keeps arrays whole', () => {
    expect(flatten({ id: 1, law_firm: { id: 'x', name: null }, tags: ['a'] })).toEqual({
      id: 1,
      'law_firm.id': 'x',
      'law_firm.name': null,
      tags: ['a'],
    });
  });
  it('keeps a server key "__proto__" as a column, without touching any prototype', () => {
    const flat = flatten(JSON.parse('{"__proto__":"v","a":2}'));
    expect(Object.keys(flat)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(flat, '__proto__')?.value).toBe('v');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
  it('collects keys in first-seen order across rows, unknown ones included', () => {
    expect(
      unionKeys([
        { a: 1, b: 2 },
        { a: 1, c: 3 },
      ]),
    ).toEqual(['a', 'b', 'c']);
  });
});

describe('CSV writer', () => {
  /** Hostile input, as properties (fast-check): the parsers and writers that meet outside data. */

  const RUNS = 400;

  const cells = fc.array(
    fc.oneof(
      fc.string(),
      anyText(),
      fc.constantFrom('=1+1', '+SUM(A1)', '-2', '@x', '\tx', '\rx', 'a,"b"\r\nc'),
    ),
    {
      minLength: 1,
      maxLength: 6,
    },
  );

  it('any strings round-trip through a standard CSV parser (guard off: exactly)', () => {
    fc.assert(
      fc.property(fc.array(cells, { minLength: 1, maxLength: 5 }), (rows) => {
        const width = rows[0]!.length;
        const table = rows.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? ''));
        const text = table.map((r) => csvRow(r, false)).join('');
        const back = parse(text, { relax_column_count: false, record_delimiter: '\r\n' }) as string[][];
        expect(back).toEqual(table);
      }),
      { numRuns: RUNS },
    );
  });

  it("with the guard on, a cell a spreadsheet would run comes back with a leading ' and nothing else changed", () => {
    fc.assert(
      fc.property(cells, (row) => {
        const [back] = parse(csvRow(row, true), { record_delimiter: '\r\n' }) as string[][];
        back!.forEach((cell, i) => {
          const original = row[i]!;
          // The documented rule: = + - @ (or a look-alike) first, after any white space or
          // invisible characters, or a tab or CR first.
          const runs = /^(?:[\t\r]|[\s\p{Default_Ignorable_Code_Point}]*[=+\-@＝＋－＠﹦﹢﹣﹫−])/u;
          expect(cell).toBe(runs.test(original) ? `'${original}` : original);
          expect(cell).not.toMatch(/^[=+\-@\t\r]/);
        });
      }),
      { numRuns: RUNS },
    );
  });
});
