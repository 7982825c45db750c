import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL } from '../fake-io.js';
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
  ['split by a space', `${TOKEN.slice(0, 10)} ${TAIL}`],
  ['split by a tab and a line break', `${TOKEN.slice(0, 6)}\t${TOKEN.slice(6, 12)}\n${TOKEN.slice(12)}`],
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

/**
 * The human views of the write commands and `imaging api` show what the server sent: the token it
 * echoes there is redacted by the one human writer, while JSON and the piped body stay exact.
 */
describe('a token echoed into human output is redacted, data formats are exact', () => {
  const ID = '11111111-1111-4111-8111-111111111111';
  const E = '\u001b]0;PWNED\u0007\u001b[2J\u001b[31mRED\u202eevil\u200b';
  let srv: Awaited<ReturnType<typeof testServer>>;
  const snap = (t: string, extra: Record<string, unknown> = {}) => ({
    id: ID,
    reference: `R-1${E}`,
    status: 'pending',
    wc_number: `WC${E}${t}`,
    insurance_number: '1',
    patient: { name: 'Jane Doe', first_name: 'Jane', last_name: 'Doe' },
    icd10_codes: [],
    law_firm: { id: 'lf', name: 'LF' },
    ...extra,
  });
  beforeAll(async () => {
    // As /tmp/atk23/ref.mjs and echo.mjs: every answer carries the bearer token back.
    srv = await testServer((req, res) => {
      const t = (req.headers.authorization ?? '').slice(7);
      const path = (req.url ?? '').split('?')[0] ?? '';
      if (path === '/api/v2/echo') {
        const body = `body ${t} ${encodeURIComponent(t).replace(/T/g, '%54')} ${t.slice(0, 5)}\u200b${t.slice(5)} end\n`;
        // Written by hand, as echo.mjs does: Node refuses a U+200B in a header it writes itself.
        const head = [
          'HTTP/1.1 200 OK',
          'content-type: text/plain',
          `x-echo: Bearer ${t}`,
          `x-enc: ${encodeURIComponent(t).replace(/T/g, '%54')}`,
          `x-split: ${t.slice(0, 5)}\u200b${t.slice(5)}`,
          `content-length: ${Buffer.byteLength(body)}`,
          'connection: close',
          '',
          '',
        ].join('\r\n');
        return res.socket?.end(Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from(body)]));
      }
      if (req.method === 'GET' && path === `/api/v2/referrals/${ID}`)
        return json(
          res,
          200,
          snap(t, {
            auto_book_request: {
              id: 'a1',
              status: 'completed',
              outcome: 'booking_failed',
              error: `failed for ${t}${E}`,
            },
          }),
        );
      if (req.method === 'PATCH') return json(res, 200, snap(t, { wc_number: `NEW${E}${t}` }));
      if (req.method === 'POST' && path.endsWith('/auto_book'))
        return json(res, 202, {
          auto_book_request: { id: 'a1', status: `processing ${t}`, strategy: 'closest', radius: 5 },
        });
      json(res, 404, { error: 'no route' });
    });
  });
  afterAll(() => srv.close());
  const env = () => ({
    IMAGING_ENV: 'sandbox',
    IMAGING_BASE_URL: srv.url,
    IMAGING_TOKEN: TOKEN,
    IMAGING_CONFIG_DIR: '/nonexistent/imaging-test-config',
    NO_COLOR: '1',
  });
  const hidden = (text: string) => {
    expect(text).not.toContain(TAIL);
    expect(text).not.toContain(TOKEN.slice(5));
    expect(text.toLowerCase()).not.toContain(pct.slice(30).toLowerCase());
    expect(text).not.toContain(encodeURIComponent(TOKEN).slice(12));
  };

  it('referrals update: the before/after view', async () => {
    const r = await run(['referrals', 'update', ID, '--wc-number', 'X1'], { env: env(), ...TERMINAL });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[redacted token]');
    hidden(r.stdout);
    hidden(r.stderr);
  });

  it('referrals auto-book --wait: the outcome message', async () => {
    const r = await run(['referrals', 'auto-book', ID, '--strategy', 'closest', '--radius', '5', '--wait'], {
      env: env(),
      ...TERMINAL,
    });
    expect(r.code).toBe(10);
    expect(r.stdout + r.stderr).toContain('[redacted token]');
    hidden(r.stdout);
    hidden(r.stderr);
  });

  it('imaging api -i: header lines and the body on a terminal; the piped body stays exact', async () => {
    const r = await run(['api', '-i', '/echo'], { env: env(), ...TERMINAL });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('x-echo: Bearer [redacted token]');
    expect(r.stdout).toContain('x-enc: [redacted token]');
    expect(r.stdout).toContain('x-split: [redacted token]');
    hidden(r.stdout);
    const p = await run(['api', '/echo'], { env: env(), stdoutIsTTY: false });
    expect(p.stdout).toContain(`body ${TOKEN} `);
    const j = await run(['referrals', 'get', ID, '--json'], { env: env(), stdoutIsTTY: false });
    expect(JSON.parse(j.stdout).wc_number).toContain(TOKEN);
  });
});
