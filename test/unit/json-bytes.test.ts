import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonBytes } from '../../src/api/json-bytes.js';
import { utf8Of } from '../../src/output/write.js';
import { num } from '../../src/util/plural.js';

/**
 * A page is parsed from its bytes record by record (src/api/json-bytes.ts): the result must be
 * JSON.parse's of the whole text, and it must throw exactly when JSON.parse would, however the
 * bytes are cut into chunks.
 */

const RUNS = 400;

/** What the old code did: the chunks as one UTF-8 string, then JSON.parse. */
function reference(chunks: Buffer[]): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

function ours(chunks: Buffer[]): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseJsonBytes(chunks) };
  } catch (err) {
    expect(err).toBeInstanceOf(SyntaxError);
    return { ok: false };
  }
}

/** The bytes cut at the given points (any byte, inside a UTF-8 sequence too). */
function cut(bytes: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const p of [...at, bytes.length]) {
    chunks.push(bytes.subarray(from, p));
    from = p;
  }
  return chunks;
}

/**
 * Same value, member by member: the same own keys in the same order, each an own writable,
 * enumerable data property (a `__proto__` key stays a member), the same prototypes.
 * (toStrictEqual reads a member named `constructor` as the type.) Compared in plain code, one
 * expect() for the whole value (one per member cost ~1 s of this file in vitest's bookkeeping):
 * the first difference, with where it is, or undefined.
 */
function difference(a: unknown, b: unknown, at = '$'): string | undefined {
  if (typeof a !== 'object' || a === null)
    return Object.is(a, b) ? undefined : `${at}: ${String(b)}, not ${String(a)}`;
  if (typeof b !== 'object' || b === null) return `${at}: ${String(b)}, not an object`;
  if (Object.getPrototypeOf(b) !== Object.getPrototypeOf(a)) return `${at}: another prototype`;
  const keysA = Reflect.ownKeys(a);
  const keysB = Reflect.ownKeys(b);
  if (keysA.length !== keysB.length || keysA.some((k, i) => k !== keysB[i]))
    return `${at}: keys [${keysB.map(String)}], not [${keysA.map(String)}]`;
  for (const key of keysA) {
    const da = Object.getOwnPropertyDescriptor(a, key) as PropertyDescriptor;
    const db = Object.getOwnPropertyDescriptor(b, key) as PropertyDescriptor;
    const where = `${at}[${JSON.stringify(String(key))}]`;
    if (da.writable !== db.writable || da.enumerable !== db.enumerable || da.configurable !== db.configurable)
      return `${where}: another kind of property`;
    const inner = difference(da.value, db.value, where);
    if (inner !== undefined) return inner;
  }
  return undefined;
}
function same(a: unknown, b: unknown): void {
  expect(difference(a, b)).toBeUndefined();
}

/** `quick`: the JSON text of the values only (key order and values; prototypes are checked elsewhere). */
function check(text: string | Buffer, points: number[] = [], quick = false): void {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const chunks = cut(bytes, points);
  const want = reference(chunks);
  const got = ours(chunks);
  if (got.ok !== want.ok)
    expect({ ok: got.ok, text: bytes.toString() }).toEqual({ ok: want.ok, text: bytes.toString() });
  if (!want.ok || !got.ok) return;
  if (quick) {
    if (JSON.stringify(got.value) !== JSON.stringify(want.value)) same(want.value, got.value);
  } else same(want.value, got.value);
}

describe('parseJsonBytes: JSON.parse of a page, record by record', () => {
  it('pages as the API sends them, cut anywhere', () => {
    const page = {
      referrals: [
        { id: 'a', patient: { first_name: 'Nguyễn', last_name: '김' }, visits: [{ procedures: [] }] },
        { id: 'b', note: 'quote " backslash \\ tab \t newline \n } ] { [ ,', n: -1.5e3 },
        { id: 'c', emoji: '😀', nested: [[[{}]]], t: true, f: false, z: null },
      ],
      meta: { current_page: 1, total_pages: 1, total_count: 3, next_page: null },
    };
    const text = JSON.stringify(page);
    for (let i = 0; i <= Buffer.byteLength(text); i++) check(text, [i], true);
    check(JSON.stringify(page, null, 2), [7, 100, 101, 102]);
    check(JSON.stringify(page.referrals), [3]);
  });

  it('large pages, of large and small records: every one, and a bad separator anywhere', () => {
    const records = Array.from({ length: 300 }, (_, i) => ({
      id: `r${i}`,
      note: `${'ü'.repeat(i % 7)}${'n'.repeat(i % 3 ? 1500 : 20)}`,
    }));
    const text = JSON.stringify({ referrals: records, meta: { total_pages: 1 } });
    check(text, [5000, 40_000, 70_001]);
    check(JSON.stringify(records), [32_768, 65_536]);
    check(JSON.stringify(Array.from({ length: 50_000 }, (_, i) => i)), [1000]);
    const bytes = Buffer.from(JSON.stringify(records));
    for (const at of [33_000, 66_000, 99_000, 150_000]) {
      const comma = bytes.indexOf(',{', at);
      for (const bad of [' ', ';', ',,'])
        check(Buffer.concat([bytes.subarray(0, comma), Buffer.from(bad), bytes.subarray(comma + 1)]));
    }
  });

  it('the shapes and edge cases JSON.parse has its own answer for', () => {
    for (const text of [
      '[]',
      ' [ ] ',
      '{}',
      '{"a":[]}',
      '\n\t{ "referrals" : [ 1 , "x" , null , [2] , {"b":{}} ] , "meta" : {} }\r\n',
      '{"__proto__":[{"x":1}],"constructor":{"y":2}}',
      '{"__proto__":{"polluted":true}}',
      '{"a":[1],"a":[2,3],"b":1,"a":"last"}',
      '{"1":[],"0":"x","b":2}',
      '"a string"',
      '42',
      'null',
      '{"referrals":[{"id":"\\u0041\\ud83d\\ude00\\""}]}',
      // Not JSON: each must throw, as JSON.parse does.
      '',
      ' ',
      '[',
      '[1,]',
      '[,1]',
      '[1 2]',
      '{"a":1,}',
      '{"a" 1}',
      '{a:1}',
      "{'a':1}",
      '[1]x',
      '[1] [2]',
      '{"a":[1]}}',
      '{"a":[{"b":1]}]}',
      '[{"a":1}}',
      '{"a":[1}',
      '["unterminated]',
      '["bad \\x escape"]',
      '["raw\u0001control"]',
      '[01]',
      '[1.]',
      '[tru]',
      '[NaN]',
      '\ufeff[1]',
      '[1]\u00a0',
    ])
      check(text);
  });

  it('bytes that are not UTF-8 decode as the whole text would (U+FFFD), at any cut', () => {
    const bad = Buffer.concat([
      Buffer.from('{"referrals":[{"name":"a'),
      Buffer.from([0xe2, 0x82]), // cut short
      Buffer.from('"},{"name":"'),
      Buffer.from([0xff, 0xc3, 0xa9, 0xed, 0xa0, 0x80]), // invalid, é, a surrogate
      Buffer.from('"}],"meta":{}}'),
    ]);
    for (let i = 0; i <= bad.length; i++) check(bad, [i, i + 3]);
  });

  it('any JSON value, printed compactly or spaced, cut anywhere (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.record({ referrals: fc.array(fc.jsonValue()), meta: fc.jsonValue() }),
          fc.array(fc.jsonValue()),
          fc.jsonValue(),
        ),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        (value, spaced, points) => check(JSON.stringify(value, null, spaced ? 1 : undefined), points, true),
      ),
      { numRuns: RUNS },
    );
  });

  it('any bytes at all: throws exactly when JSON.parse does, else the same value (property)', () => {
    const jsonish = fc.constantFrom(...'{}[],:" \\\n0123456789-.eE+tfnul"aé'.split(''));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(jsonish, { maxLength: 40 }).map((cs) => Buffer.from(cs.join(''))),
          fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
          fc.tuple(fc.jsonValue(), fc.nat(), fc.integer({ min: 0, max: 255 })).map(([v, at, byte]) => {
            const b = Buffer.from(JSON.stringify({ referrals: [v, v] }));
            b[at % b.length] = byte;
            return b;
          }),
        ),
        fc.array(fc.nat(), { maxLength: 4 }),
        (bytes, points) => check(bytes, points),
      ),
      { numRuns: RUNS * 2 },
    );
  });
});

describe('utf8Of: the pieces of a page as one buffer', () => {
  it('is the UTF-8 of the joined text', () => {
    const pieces = ['', 'plain,', 'Hernández ', 'Nguyễn 김 😀\r\n', 'x'.repeat(5000)];
    expect(utf8Of(pieces).equals(Buffer.from(pieces.join('')))).toBe(true);
    expect(utf8Of([]).length).toBe(0);
  });
});

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
