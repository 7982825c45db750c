import { describe, expect, it } from 'vitest';
import { redactToken } from '../../src/api/trace.js';

describe('redactToken', () => {
  const TOKEN = 'prod-Tk7Qx9Lm2Vb8Rw4Zc6';

  // A block of plain ASCII (a table, a detail view) keeps its tabs and line breaks: the token split
  // by them, or by spaces, is still the token.
  it.each([
    ['a space', `${TOKEN.slice(0, 10)} ${TOKEN.slice(10)}`],
    ['a tab', `${TOKEN.slice(0, 10)}\t${TOKEN.slice(10)}`],
    ['a line break', `${TOKEN.slice(0, 10)}\n${TOKEN.slice(10)}`],
    ['several', `${TOKEN.slice(0, 4)} \n\t${TOKEN.slice(4, 9)}\n  ${TOKEN.slice(9)}`],
  ])('finds the token split by %s in plain text', (_name, split) => {
    expect(redactToken(`row 1\nsays ${split} here\nrow 3`, TOKEN)).toBe(
      'row 1\nsays [redacted token] here\nrow 3',
    );
  });

  it('leaves text that only comes close as it is', () => {
    for (const text of [
      `${TOKEN.slice(0, -1)} ${TOKEN.slice(0, 1)}`,
      `${TOKEN.slice(0, 10)}-${TOKEN.slice(10)}`,
      'p'.repeat(1000),
      `${TOKEN.slice(0, 5)}\n`.repeat(3),
      '',
    ])
      expect(redactToken(text, TOKEN)).toBe(text);
  });

  it('finds each of several copies, and a token percent-encoded in otherwise plain text', () => {
    const pct = [...TOKEN].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    expect(redactToken(`${TOKEN} and p ${TOKEN}`, TOKEN)).toBe('[redacted token] and p [redacted token]');
    expect(redactToken(`a ${pct} b`, TOKEN)).toBe('a [redacted token] b');
  });
});
