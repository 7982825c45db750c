import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Sink } from '../../src/io.js';
import { assertNever, type FORMATS, type OutputFormat } from '../../src/output/format.js';
import { utf8Of, write } from '../../src/output/write.js';
import { fakeIO } from '../helpers.js';

describe('FORMATS: each format has its case in the one writer', () => {
  it('a format outside the switch is a type error (assertNever takes only never)', () => {
    type Widened = OutputFormat | 'tsv';
    const handled = (f: Widened): string => {
      switch (f) {
        case 'table':
        case 'json':
        case 'ndjson':
        case 'csv':
          return f;
        default:
          // @ts-expect-error: 'tsv' has no case, so the default is reached with a value, not never.
          return assertNever(f);
      }
    };
    expect(handled('csv')).toBe('csv');
    expectTypeOf<(typeof FORMATS)[number]>().toEqualTypeOf<OutputFormat>();
    expect(() => assertNever('tsv' as never)).toThrow(/no case for the format tsv/);
  });
});

describe('write: one framing, whether the records come at once or page by page', () => {
  const records = [
    { id: 'a', n: 1, nested: { x: [1, 2] } },
    { id: 'b', text: 'Nguyễn, "quoted"' },
    { id: 'c' },
  ];
  async function* pages() {
    yield records.slice(0, 1);
    yield [];
    yield records.slice(1);
  }
  const sinkOf = () => {
    const { io, stdout } = fakeIO();
    const sink: Sink = {
      data: io.stdout,
      out: undefined as never,
      err: undefined as never,
      color: false,
      width: undefined,
    };
    return { sink, stdout };
  };
  it.each([
    ['json', `${JSON.stringify(records, null, 2)}\n`],
    ['ndjson', records.map((r) => `${JSON.stringify(r)}\n`).join('')],
  ] as const)('%s: the same bytes from an array and from pages', async (format, expected) => {
    for (const input of [records, pages()]) {
      const { sink, stdout } = sinkOf();
      expect(await write(input, { format, sink })).toBe(3);
      expect(stdout()).toBe(expected);
    }
  });
  it('json: an empty list is []', async () => {
    const { sink, stdout } = sinkOf();
    await write([], { format: 'json', sink });
    expect(stdout()).toBe('[]\n');
  });
});

describe('utf8Of: the pieces of a page as one buffer', () => {
  it('is the UTF-8 of the joined text', () => {
    const pieces = ['', 'plain,', 'Hernández ', 'Nguyễn 김 😀\r\n', 'x'.repeat(5000)];
    expect(utf8Of(pieces).equals(Buffer.from(pieces.join('')))).toBe(true);
    expect(utf8Of([]).length).toBe(0);
  });
});
