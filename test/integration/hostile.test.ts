import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Referral } from '../../src/api/types.js';
import { HOSTILE } from '../../src/emulator/hostile.js';
import { fakeIO, mockFixture, type RunOptions, run, tempDir, testServer } from '../helpers.js';

/**
 * Issue 8 item 3: `imaging mock --hostile` serves terminal escapes (ESC [, OSC 52, OSC 0, CSI 2J),
 * C1 CSI, bidi overrides and isolates, zero-width and BOM, CR, LF, BEL, DEL and NUL in every
 * string field, in X-Request-Id and other headers, in the reason phrase, in error envelopes, in
 * the SSO URL and in pagination meta. Every human-output command runs against it, piped and on a
 * terminal, with colour off and forced, and its stdout and stderr are scanned.
 */

/** Any C0 but \n and \t, DEL, C1, a line/paragraph separator, a format (Cf: bidi, zero-width, BOM) or lone surrogate. */
const FORBIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\p{Cf}\p{Cs}]/u;
/** The SGR codes the tool itself emits (bold, dim, red, green, yellow and their resets). */
const OWN_SGR = /\u001b\[(?:1|2|22|31|32|33|39|31;1|22;39)m/g;

function forbiddenIn(text: string, colour: boolean): string[] {
  const t = colour ? text.replace(OWN_SGR, '') : text;
  const found = new Set<string>();
  for (const ch of t)
    if (FORBIDDEN.test(ch)) found.add(`U+${ch.codePointAt(0)!.toString(16).padStart(4, '0')}`);
  return [...found];
}

const fx = mockFixture({ hostile: true, referrals: 40 });
let dir: { path: string; cleanup: () => void };
let referral: Referral;
let referralFile: string;

beforeAll(async () => {
  await fx.start();
  dir = tempDir();
  // A referral with visits, procedures and call notes, so every part of the detail view shows.
  for (let i = 0; i < fx.mock.referrals.total; i++) {
    const r = fx.mock.referrals.at(i);
    if (r.visits?.some((v) => (v.procedures?.length ?? 0) > 0) && (r.call_notes?.length ?? 0) > 0) {
      referral = r;
      break;
    }
  }
  referralFile = join(dir.path, 'referral.json');
  writeFileSync(referralFile, JSON.stringify({ referral: { patient: { first_name: 'Ana' } } }));
});
afterAll(async () => {
  await fx.stop();
  dir.cleanup();
});

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** $ID and $FILE stand for the referral and the create payload, known once the emulator runs. */
const commands: Array<[string, string[]]> = [
  ['modalities', ['modalities']],
  ['body-parts', ['body-parts']],
  ['cpt', ['cpt', '73721']],
  ['icd10 (pagination hint)', ['icd10', 'knee', '--per-page', '1']],
  ['law-firms search (pagination hint)', ['law-firms', 'search', 'a', '--per-page', '1']],
  ['law-firms create', ['law-firms', 'create', '--name', 'New Firm', '--city', 'Austin', '--state', 'TX']],
  ['referrals list', ['referrals', 'list', '--per-page', '5']],
  ['referrals get', ['referrals', 'get', '$ID']],
  ['referrals create', ['referrals', 'create', '--file', '$FILE']],
  ['auth status --check', ['auth', 'status', '--check']],
  ['sso (refused URL)', ['sso']],
  ['an API error block (404)', ['referrals', 'get', UNKNOWN]],
  ['--verbose trace and error', ['--verbose', 'referrals', 'get', UNKNOWN]],
  ['--verbose trace', ['--verbose', 'cpt', '73721']],
];

describe('imaging mock --hostile: no control, escape, bidi or format character reaches a person', () => {
  const variants: Array<[string, RunOptions]> = [
    ['piped', {}],
    ['terminal', { stdoutIsTTY: true, stderrIsTTY: true, columns: 120 }],
    ['terminal, NO_COLOR=1', { stdoutIsTTY: true, stderrIsTTY: true, columns: 120, env: { NO_COLOR: '1' } }],
    [
      'terminal, FORCE_COLOR=1',
      { stdoutIsTTY: true, stderrIsTTY: true, columns: 120, env: { FORCE_COLOR: '1' } },
    ],
  ];
  for (const [variant, opts] of variants) {
    it.each(commands)(`%s (${variant})`, async (_name, args) => {
      const argv = args.map((a) => (a === '$ID' ? referral.id : a === '$FILE' ? referralFile : a));
      // Colour is on on a terminal or with FORCE_COLOR; then only our own SGR codes may appear.
      const colour =
        opts.env?.NO_COLOR === undefined && (opts.env?.FORCE_COLOR === '1' || opts.stdoutIsTTY === true);
      const r = await run(argv, { ...opts, env: fx.env({ ...opts.env }) });
      const output = r.stdout + r.stderr;
      expect(output.length).toBeGreaterThan(0);
      expect(forbiddenIn(r.stdout, colour)).toEqual([]);
      expect(forbiddenIn(r.stderr, colour)).toEqual([]);
      // The server's own colour code is shown, not obeyed, even where colour is on.
      expect(output).not.toContain('\u001b[31mred');
      expect(output).not.toContain('\u001b[0m');
      expect(output).not.toMatch(/Error: |\n {4}at /); // no stack trace
    });
  }

  it('shows the hostile text escaped, a table cell on one line, and still aligns the columns', async () => {
    const r = await run(['cpt', '73721'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('\u241b]52;c;cHduZWQ=\u2407'); // OSC 52 visible, not run
    expect(r.stdout).toContain('<U+202E>evil');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1 + fx.mock.data.cpt.filter((m) => m.code === '73721').length);
    expect(lines.some((l) => l.startsWith('error: forged line'))).toBe(false);
  });

  it('the pagination hint shows numbers only: meta strings leave it out', async () => {
    const r = await run(['icd10', 'knee', '--per-page', '1'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('the detail view escapes procedure fields and a call note time that is not a date', async () => {
    const r = await run(['referrals', 'get', referral.id], { env: fx.env() });
    expect(r.code).toBe(0);
    const proc = referral.visits!.flatMap((v) => v.procedures ?? [])[0]!;
    expect(r.stdout).toContain(`${proc.body_part}\u241b[31mred`);
    expect(r.stdout).toContain(`${referral.call_notes![0]!.created_at}\u241b[31mred`);
  });

  it('sso refuses a URL with escapes or line breaks: exit 1, one clear error, the URL never shown', async () => {
    const opened: string[] = [];
    const r = await run(['sso', '--open'], {
      env: fx.env(),
      deps: {
        openUrl: async (u) => {
          opened.push(u);
          return true;
        },
      },
    });
    expect(r.code).toBe(1);
    expect(opened).toEqual([]);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: the SSO answer is not a single-line absolute https URL/);
    expect(r.stderr).not.toContain('/portal/sso/');
  });

  it('JSON, NDJSON and CSV stay byte-faithful data', async () => {
    const raw = await rawGet(`${fx.mock.url}/api/v2/referrals/${referral.id}`);
    expect(raw.status).toBe(200);
    expect(JSON.parse(raw.body.toString('utf8')).reference).toBe(referral.reference + HOSTILE);
    expect(raw.body.toString('utf8')).toContain('\u009b31m\u202eevil'); // C1 and bidi as raw bytes
    const get = await run(['referrals', 'get', referral.id, '--json'], { env: fx.env() });
    expect(Buffer.from(get.stdout)).toEqual(Buffer.concat([raw.body, Buffer.from('\n')]));
    // On a terminal: the same data, with C1 and bidi characters as JSON escapes.
    const tty = await run(['referrals', 'get', referral.id, '--json'], { env: fx.env(), stdoutIsTTY: true });
    expect(JSON.parse(tty.stdout)).toEqual(JSON.parse(raw.body.toString('utf8')));
    expect(tty.stdout).not.toMatch(/[\u009b\u202e]/);

    const cpt = JSON.parse(
      (await rawGet(`${fx.mock.url}/api/v2/cpt_codes?code=73721`)).body.toString('utf8'),
    );
    const nd = await run(['cpt', '73721', '--format', 'ndjson'], { env: fx.env() });
    expect(
      nd.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(cpt);
    const asJson = await run(['cpt', '73721', '--json'], { env: fx.env() });
    expect(JSON.parse(asJson.stdout)).toEqual(cpt);
    const csv = await run(['cpt', '73721', '--format', 'csv'], { env: fx.env() });
    expect(csv.stdout).toContain(`"73721${HOSTILE.replace(/"/g, '""')}"`);
  });
});

describe('hostile deliveries to webhook verify and webhook listen', () => {
  const SECRET = 'whsec_hostile_test';
  let secretFile: string;
  beforeAll(() => {
    secretFile = join(dir.path, 'secret.txt');
    writeFileSync(secretFile, SECRET);
  });
  const body = Buffer.from(
    JSON.stringify({ event_name: `visit.status_changed${HOSTILE}`, event_id: `ev${HOSTILE}` }),
  );

  it.each<[string, RunOptions]>([
    ['piped', {}],
    ['FORCE_COLOR=1', { env: { FORCE_COLOR: '1' } }],
  ])('verify prints the verdict with event names, ids and headers escaped (%s)', async (_v, opts) => {
    const capture = join(dir.path, 'capture.http');
    const head = [
      'POST /hook HTTP/1.1',
      'Host: example.test',
      `X-Service-Event: x\u009b31m\u202eevil\u200b`,
      'X-Service-Timestamp: 17\u001b[2J',
      'X-Service-Signature: v1=00',
      `Content-Length: ${body.length}`,
    ].join('\r\n');
    writeFileSync(capture, Buffer.concat([Buffer.from(`${head}\r\n\r\n`), body]));
    const r = await run(['webhook', 'verify', '--request', capture, '--secret-file', secretFile], {
      env: { ...opts.env },
    });
    expect(r.code).toBe(8);
    const colour = opts.env?.FORCE_COLOR === '1';
    expect(forbiddenIn(r.stdout, colour)).toEqual([]);
    expect(forbiddenIn(r.stderr, colour)).toEqual([]);
    expect(r.stdout).toContain('NOT valid');
    expect(r.stdout).toContain('\u241b[2J');
  });

  it('listen prints an unsigned request with a hostile event name as one escaped line', async () => {
    const { main } = await import('../../src/main.js');
    const { InterruptedError } = await import('../../src/errors.js');
    const fake = fakeIO();
    const ac = new AbortController();
    const done = main(['webhook', 'listen', '--port', '0', '--secret-file', secretFile], {
      io: fake.io,
      env: {},
      signal: ac.signal,
    });
    let url = '';
    while (!url) {
      url = /Listening for webhooks on (http:\/\/\S+)/.exec(fake.stderr())?.[1] ?? '';
      if (!url) await new Promise((r) => setImmediate(r));
    }
    const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    ac.abort(new InterruptedError('SIGINT'));
    expect(await done).toBe(130);
    const lines = fake.stdout().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/INVALID {2}visit\.status_changed\u241b\[31mred/);
    expect(forbiddenIn(fake.stdout(), false)).toEqual([]);
    expect(forbiddenIn(fake.stderr(), false)).toEqual([]);
  });
});

describe('hostile answers Node itself refuses, and api text on a terminal', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // ESC in a header: Node's HTTP parser refuses the answer; the tool must say so in one line.
    server = createServer((socket) => {
      socket.once('data', () =>
        socket.end(
          'HTTP/1.1 200 OK\r\nx-request-id: \u001b]0;pwned\u0007\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n[]',
          'latin1',
        ),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('an escape in a header: one clear error, exit 1, nothing unsanitised', async () => {
    const r = await run(['--verbose', 'modalities'], {
      env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: url, IMAGING_CONFIG_DIR: dir.path },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: network error talking to http:\/\/127\.0\.0\.1:\d+: Parse Error/m);
    expect(r.stderr.match(/^error:/gm)).toHaveLength(1);
    expect(forbiddenIn(r.stderr, false)).toEqual([]);
  });

  it('imaging api: a text answer is sanitised on a terminal and byte-exact when piped', async () => {
    const text = `plain ${HOSTILE} text\n`;
    const srv = await testServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(text);
    });
    try {
      const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: dir.path };
      const tty = await run(['api', '/notes'], { env, stdoutIsTTY: true });
      expect(tty.code).toBe(0);
      expect(forbiddenIn(tty.stdout, false)).toEqual([]);
      expect(tty.stdout).toContain('\u241b]52;c;');
      const piped = await run(['api', '/notes'], { env });
      expect(piped.stdout).toBe(text);
    } finally {
      await srv.close();
    }
  });
});

function rawGet(url: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { authorization: 'Bearer mock-token' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}
