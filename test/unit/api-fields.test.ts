import { describe, expect, it } from 'vitest';
import { nest } from '../../src/commands/api.js';

describe('nest', () => {
  it('builds nested objects and arrays from Rails-style keys', () => {
    expect(
      nest([
        ['a[b][c]', 1],
        ['tags[]', 'x'],
        ['tags[]', 'y'],
        ['top', true],
      ]),
    ).toEqual({
      a: { b: { c: 1 } },
      tags: ['x', 'y'],
      top: true,
    });
  });
  it('rejects malformed keys', () => {
    expect(() => nest([['a[b', 1]])).toThrow(/not of the form/);
  });
});
