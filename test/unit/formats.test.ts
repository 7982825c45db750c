import { describe, expect, expectTypeOf, it } from 'vitest';
import { assertNever, type FORMATS, type OutputFormat } from '../../src/output/format.js';

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
