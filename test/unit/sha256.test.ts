import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/util/sha256.js';

// The reference cache's file names and token hashes and the allowance meter's keys were made with
// node:crypto; they are now made without it (start-up cost). Files and meters written before must
// still be found: the digest is the same for every text.
const nodeSha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('sha256Hex (src/util/sha256.ts)', () => {
  it('is the published SHA-256 (FIPS 180-4 examples)', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('equals node:crypto at every length around the 64-byte block and its padding', () => {
    for (let n = 0; n <= 200; n++) {
      const text = 'x'.repeat(n);
      expect(sha256Hex(text), `length ${n}`).toBe(nodeSha256(text));
    }
  });

  it('equals node:crypto for any text: non-ASCII, astral and lone surrogates (UTF-8 as Node encodes it)', () => {
    // Seeded, so a failure is the same text every run: code units from every range (ASCII, two-
    // and three-byte UTF-8, both halves of surrogate pairs, and halves alone).
    let seed = 0x9e3779b9;
    const next = () => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
      return seed;
    };
    const ranges = [0x80, 0x800, 0x10000];
    for (let i = 0; i < 400; i++) {
      const units: number[] = [];
      for (let n = next() % 120; n > 0; n--) units.push(next() % (ranges[next() % 3] as number));
      const text = String.fromCharCode(...units);
      if (sha256Hex(text) !== nodeSha256(text))
        expect(sha256Hex(text), JSON.stringify(text)).toBe(nodeSha256(text));
    }
    expect(sha256Hex('\u{1F9B4} knee \u00e9')).toBe(nodeSha256('\u{1F9B4} knee \u00e9'));
    expect(sha256Hex('\ud800 lone')).toBe(nodeSha256('\ud800 lone'));
  });

  it('equals node:crypto for the keys as they are made (token, NUL, URL)', () => {
    const token = 'pk_test_0123456789abcdef';
    const url = 'https://sandbox.example.test/api/v2/cpt_codes?code=73721';
    const text = `imaging reference cache\0${new URL(url).origin}\0${token}`;
    expect(sha256Hex(text)).toBe(nodeSha256(text));
    expect(sha256Hex(`${sha256Hex(text)}\0${url}`)).toBe(nodeSha256(`${nodeSha256(text)}\0${url}`));
  });
});
