import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdSet } from '../../src/api/idset.js';

/**
 * The page walk's duplicate check: IdSet keeps UUIDs as 128 bits, yet its
 * membership must be exactly a Set<string>'s — never a record dropped that was not seen, never a
 * duplicate missed. Checked against a reference Set for random ids.
 */

/** A UUID in lower case, upper case or mixed case, or some other id (short text, near-UUIDs). */
const anId = fc.oneof(
  fc.uuid().map((u) => u.toLowerCase()),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => u.replace(/[a-f]/, (c) => c.toUpperCase())),
  fc.uuid().map((u) => `${u.slice(0, 35)}g`),
  fc.uuid().map((u) => u.replace(/-/g, '')),
  fc.string({ maxLength: 40 }),
);

describe('IdSet', () => {
  it('has the same members as a Set<string>, for any sequence of adds and lookups', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), anId), { maxLength: 400 }), (ops) => {
        const set = new IdSet();
        const ref = new Set<string>();
        for (const [isAdd, id] of ops) {
          if (isAdd) {
            expect(set.add(id)).toBe(!ref.has(id));
            ref.add(id);
          } else expect(set.has(id)).toBe(ref.has(id));
        }
        expect(set.size).toBe(ref.size);
        for (const id of ref) expect(set.has(id)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('the two cases of one UUID are two ids, as in a Set<string>', () => {
    fc.assert(
      fc.property(fc.uuid(), (u) => {
        const set = new IdSet();
        set.add(u.toLowerCase());
        expect(set.has(u.toUpperCase())).toBe(!/[a-f]/i.test(u));
      }),
    );
  });

  it('stays exact while it grows past many table sizes (50,000 UUIDs, every one added once)', () => {
    // Seeded random v4 UUIDs (fast-check's sample of 50,000 took most of a second).
    let seed = 42;
    const word = () => {
      // mulberry32
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0).toString(16).padStart(8, '0');
    };
    const ids = Array.from({ length: 50_000 }, () => {
      const h = `${word()}${word()}${word()}${word()}`;
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[Number.parseInt(h[16]!, 16) & 3]}${h.slice(17, 20)}-${h.slice(20)}`;
    });
    expect(new Set(ids).size).toBeGreaterThan(49_990);
    const set = new IdSet();
    const ref = new Set<string>();
    // Differences collected, then one assertion (an expect per id was most of this test's time).
    const wrong: string[] = [];
    for (const id of ids) {
      if (set.add(id) !== !ref.has(id)) wrong.push(`add ${id}`);
      ref.add(id);
    }
    expect(set.size).toBe(ref.size);
    for (const id of ids) if (!set.has(id)) wrong.push(`has ${id}`);
    // Ids that differ from a member in one bit are not members.
    for (const id of ids.slice(0, 1000)) {
      const flipped = id.slice(0, 35) + (id[35] === '0' ? '1' : '0');
      if (set.has(flipped) !== ref.has(flipped)) wrong.push(`flipped ${flipped}`);
    }
    expect(wrong).toEqual([]);
  });

  it('the all-zero UUID is a member only once added', () => {
    const set = new IdSet();
    const zero = '00000000-0000-0000-0000-000000000000';
    expect(set.has(zero)).toBe(false);
    expect(set.add(zero)).toBe(true);
    expect(set.has(zero)).toBe(true);
    expect(set.add(zero)).toBe(false);
  });
});
