import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { num } from '../../src/util/plural.js';

const RUNS = 400;
describe('num: counts grouped as en-US groups them, without ICU', () => {
  it('every whole number as toLocaleString("en-US") writes it', () => {
    for (const n of [0, -0, 1, -1, 999, 1000, -1000, 12345, 999999, 1000000, 37804, Number.MAX_SAFE_INTEGER])
      expect(num(n)).toBe(n.toLocaleString('en-US'));
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => num(n) === n.toLocaleString('en-US')),
      { numRuns: RUNS },
    );
    for (const n of [1.5, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY])
      expect(num(n)).toBe(n.toLocaleString('en-US'));
  });
});
