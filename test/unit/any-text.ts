import fc from 'fast-check';

// What fast-check's `fc.string({ unit: 'binary' })` gives, without the map of every code point that
// its unit builds first (a second of CPU in each worker that loads it): text of any Unicode scalar
// values, the small ones (controls, ASCII) and the last planes most often, and now and then one of
// the names that break a plain object (fast-check's own list) as a whole string.
const OBJECT_NAMES = [
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'toString',
  'valueOf',
  'apply',
  'arguments',
  'bind',
  'call',
  'caller',
  'length',
  'name',
  'prototype',
  'key',
  'ref',
];
const SURROGATES = 0xe000 - 0xd800;
const scalar = fc
  .integer({ min: 0, max: 0x10ffff - SURROGATES })
  .map((c) => String.fromCodePoint(c < 0xd800 ? c : c + SURROGATES));

export function anyText(constraints: { minLength?: number; maxLength?: number } = {}): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.string({ unit: scalar, ...constraints }), weight: 9 },
    { arbitrary: fc.constantFrom(...OBJECT_NAMES), weight: 1 },
  );
}
