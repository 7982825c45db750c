import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, run, testServer } from '../helpers.js';

/**
 * A server that echoes the token in its error text, hidden from a plain search: split by an
 * invisible character, a control or an escape sequence, or percent-encoded character by
 * character. The token is never shown, in the error block or in the --verbose trace.
 */

const TOKEN = 'prod-Tk7Qx9Lm2Vb8Rw4Zc6';
const TAIL = TOKEN.slice(10);
const pct = [...TOKEN].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
const variants: Array<[string, string]> = [
  ['split by U+200B', `${TOKEN.slice(0, 10)}\u200b${TAIL}`],
  ['split by a soft hyphen', `${TOKEN.slice(0, 10)}\u00ad${TAIL}`],
  ['split by ESC[0m', `${TOKEN.slice(0, 10)}\u001b[0m${TAIL}`],
  ['split by CR', `${TOKEN.slice(0, 10)}\r${TAIL}`],
  ['split by U+202E', `${TOKEN.slice(0, 10)}\u202e${TAIL}`],
  ['with an invisible character between every two', [...TOKEN].join('\u2066')],
  ['percent-encoded character by character', pct],
  ['percent-encoded in lower case', pct.toLowerCase()],
];

let echo = '';
let server: Awaited<ReturnType<typeof testServer>>;
beforeAll(async () => {
  server = await testServer((_req, res) =>
    json(res, 400, { error: { code: 'bad_request', message: `token ${echo} is not valid here` } }),
  );
});
afterAll(() => server.close());

const env = () => ({
  IMAGING_ENV: 'production',
  IMAGING_BASE_URL: server.url,
  IMAGING_TOKEN: TOKEN,
  IMAGING_CONFIG_DIR: '/nonexistent/imaging-test-config',
  NO_COLOR: '1',
});

describe('a token echoed by the server in disguise is redacted', () => {
  for (const [name, text] of variants) {
    it(name, async () => {
      echo = text;
      const r = await run(['--verbose', 'modalities'], { env: env() });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('[redacted token]');
      for (const shown of [r.stderr, r.stdout]) {
        expect(shown).not.toContain(TAIL);
        expect(shown.toLowerCase()).not.toContain(pct.slice(30).toLowerCase());
      }
    });
  }

  it('ordinary text around the token is kept', async () => {
    echo = `${TOKEN.slice(0, 10)}\u200b${TAIL}`;
    const r = await run(['modalities'], { env: env() });
    expect(r.stderr).toContain('token [redacted token] is not valid here');
  });
});
