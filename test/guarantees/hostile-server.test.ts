import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../src/api/types.js';
import { HOSTILE } from '../../src/emulator/hostile.js';
import { BIN, fakeIO, mockFixture, type RunOptions, run, spawnCli, tempDir, testServer } from '../helpers.js';
import '../reliability.js';
import { DRIPS, rawReceiver, secretFileFixture } from '../webhook-fixture.js';

/**
 * `imaging mock --hostile` serves terminal escapes (ESC [, OSC 52, OSC 0, CSI 2J),
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

describe('answers the tool cannot read', () => {
  /**
   * Answers of the wrong shape, served for real by a server on 127.0.0.1: each human-output command
   * says "the server sent an answer this tool cannot read: <where>" (exit 1) with the request id,
   * and no stack trace; JSON output prints what it can as sent.
   */

  const ID = '3f1c2b9e-1111-4222-8333-444455556666';

  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

  const REQUEST_ID = 'req-shape-7';

  let answer = '[]';

  let server: Awaited<ReturnType<typeof testServer>>;

  beforeAll(async () => {
    server = await testServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': REQUEST_ID });
      res.end(answer);
    });
  });

  afterAll(() => server.close());

  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    dir = tempDir();
    server.seen.length = 0;
  });

  afterEach(() => dir.cleanup());

  const env = () => ({ IMAGING_TOKEN: 'shape-test-token', IMAGING_CONFIG_DIR: dir.path });

  const cli = (args: string[]) =>
    run(['--env', 'production', '--base-url', server.url, ...args], { env: env() });

  const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+|unexpected failure/);

  function expectUnreadable(r: { code: number; stderr: string; stdout: string }, where: string) {
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: the server sent an answer this tool cannot read: ${where}\n`);
    expect(r.stderr).toContain(`  request id: ${REQUEST_ID}\n`);
    noStack(r.stderr);
  }

  const referral = (extra: Record<string, unknown> = {}) => ({
    id: ID,
    reference: 'R-1',
    status: 'pending',
    patient: { first_name: 'Ann', last_name: 'Lee' },
    visits: [
      {
        id: 'v1',
        modality: 'MRI',
        status: 'booked',
        location: { name: 'Center' },
        procedures: [{ body_part: 'Knee', contrast: 'without_contrast', cpt_code: '73721' }],
      },
    ],
    ...extra,
  });

  const withProcedure = (proc: Record<string, unknown>) =>
    referral({ visits: [{ id: 'v1', status: 'booked', procedures: [{ body_part: 'Knee', ...proc }] }] });

  describe('referrals get (the detail view)', () => {
    it.for<[string, unknown, string]>([
      [
        'a non-string contrast',
        withProcedure({ contrast: { with: true } }),
        'the referral, visit 1, procedure 1: contrast is an object, not text',
      ],
      [
        'a numeric contrast',
        withProcedure({ contrast: 2 }),
        'the referral, visit 1, procedure 1: contrast is a number, not text',
      ],
      [
        'visits as an object',
        referral({ visits: { v1: {} } }),
        'the referral: visits is an object, not a list',
      ],
      ['a null visit', referral({ visits: [null] }), 'the referral: visits item 1 is null, not an object'],
      [
        'procedures as text',
        referral({ visits: [{ procedures: 'none' }] }),
        'the referral, visit 1: procedures is text, not a list',
      ],
      [
        'a location list',
        referral({ visits: [{ location: ['x'] }] }),
        'the referral, visit 1: location is a list, not an object',
      ],
      [
        'a null ICD-10 code',
        referral({ icd10_codes: [null] }),
        'the referral: icd10_codes item 1 is null, not an object',
      ],
      [
        'call notes as an object',
        referral({ call_notes: { a: 1 } }),
        'the referral: call_notes is an object, not a list',
      ],
      [
        'a patient name object',
        referral({ patient: { first_name: { x: 1 } } }),
        'the referral, patient: first_name is an object, not text',
      ],
      ['a patient as text', referral({ patient: 'Ann Lee' }), 'the referral: patient is text, not an object'],
      ['a status list', referral({ status: ['a'] }), 'the referral: status is a list, not text'],
      [
        'a visit status number',
        referral({ visits: [{ status: 3 }] }),
        'the referral, visit 1: status is a number, not text',
      ],
      ['a list instead of a referral', [referral()], 'the referral is a list, not an object'],
      ['null', null, 'the referral is null, not an object'],
    ])('%s: exit 1 with where and the request id', async ([, body, where]) => {
      answer = JSON.stringify(body);
      const r = await cli(['referrals', 'get', ID]);
      expectUnreadable(r, where);
      expect(r.stdout).toBe('');
    });

    it('--json prints the same answer as sent', async () => {
      answer = JSON.stringify(referral({ visits: { v1: {} } }));
      const r = await cli(['referrals', 'get', ID, '--json']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${answer}\n`);
    });

    it('a well-formed referral still renders', async () => {
      answer = JSON.stringify(referral());
      const r = await cli(['referrals', 'get', ID]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Referral R-1');
      expect(r.stdout).toContain('Knee, without contrast');
    });
  });

  describe('JSON nested 200,000 deep', () => {
    // Every command reads its answer through the one client, which refuses the depth before any
    // command sees the value: 200,000 deep for a record and a list read as tables; the others at
    // 20,000, still deeper than any recursive walk or JSON.stringify survives (they overflow at 10,000).
    it.for<[string, string[], number]>([
      ['referrals get', ['referrals', 'get', ID], 200_000],
      ['referrals get --json', ['referrals', 'get', ID, '--json'], 20_000],
      ['referrals list', ['referrals', 'list'], 200_000],
      ['referrals list --json', ['referrals', 'list', '--json'], 20_000],
      ['cpt', ['cpt', '73721'], 20_000],
      ['cpt --format csv', ['cpt', '73721', '--format', 'csv'], 20_000],
      ['modalities', ['modalities'], 20_000],
      ['icd10 --all', ['icd10', 'knee', '--all'], 20_000],
      ['law-firms search', ['law-firms', 'search', 'smith'], 20_000],
    ])('%s: exit 1, where, request id', async ([, args, depth]) => {
      answer = deep(depth);
      const r = await cli(args);
      expect(r.stderr).toMatch(
        /cannot read: GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/\S+: JSON nested more than 256 levels deep/,
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`request id: ${REQUEST_ID}`);
      noStack(r.stderr);
    });

    it('nested inside a record, in the real binary: no stack overflow reaches the user', async () => {
      answer = `[{"code":"73721","contrast":${deep(200_000)}}]`;
      const r = await spawnCli(['--env', 'production', '--base-url', server.url, 'cpt', '73721'], {
        env: env(),
      });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toMatch(
        /^error: the server sent an answer this tool cannot read: GET .*cpt_codes\?code=73721: JSON nested more than 256 levels deep\n {2}request id: req-shape-7\n/,
      );
      noStack(r.stderr);
    });

    it('a depth the API could plausibly send still works', async () => {
      answer = `[{"code":"73721","contrast":"without_contrast","x":${deep(200)}}]`;
      const r = await cli(['cpt', '73721', '--json']);
      expect(r.code).toBe(0);
    });

    it('imaging api prints such an answer as the bytes that came', async () => {
      answer = deep(200_000);
      const r = await cli(['api', '/anything']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(answer);
    });
  });

  describe('lists of the wrong shape', () => {
    it.for<[string, string[], unknown, string]>([
      [
        'referrals list: visits as an object',
        ['referrals', 'list'],
        { referrals: [referral({ visits: { a: 1 } })], meta: {} },
        'referral item 1: visits is an object, not a list',
      ],
      [
        'referrals list: contrast object',
        ['referrals', 'list'],
        { referrals: [referral(), withProcedure({ contrast: {} })], meta: {} },
        'referral item 2, visit 1, procedure 1: contrast is an object, not text',
      ],
      [
        'referrals list: a null referral',
        ['referrals', 'list'],
        { referrals: [null], meta: {} },
        'referrals: item 1 is null, not an object',
      ],
      [
        'cpt: contrast object',
        ['cpt', '73721'],
        [{ code: '73721', contrast: { with: 1 } }],
        'CPT mappings: item 1: contrast is an object, not text',
      ],
      ['cpt: a null mapping', ['cpt', '73721'], [null], 'CPT mappings: item 1 is null, not an object'],
      [
        'cpt: no list at all',
        ['cpt', '73721'],
        { mappings: 'none' },
        'the CPT mappings answer is an object, not a list',
      ],
      ['modalities: text', ['modalities'], 'MRI', 'the modalities answer is text, not a list'],
      ['body-parts: a list item', ['body-parts'], [['Knee']], 'body parts: item 1 is a list, not an object'],
      [
        'icd10: description object',
        ['icd10', 'knee'],
        { icd10_codes: [{ code: 'M23', short_description: { en: 'x' } }], meta: {} },
        'ICD-10 codes: item 1: short_description is an object, not text',
      ],
      [
        'law-firms search: name list',
        ['law-firms', 'search', 'smith'],
        { law_firms: [{ name: ['a'] }], meta: {} },
        'law firms: item 1: name is a list, not text',
      ],
      [
        'law-firms search: a second address line object',
        ['law-firms', 'search', 'smith'],
        { law_firms: [{ name: 'Smith', address_line_2: { suite: 1 } }], meta: {} },
        'law firms: item 1: address_line_2 is an object, not text',
      ],
      [
        'body-parts: laterality list',
        ['body-parts'],
        [{ name: 'Knee', laterality: [true] }],
        'body parts: item 1: laterality is a list, not text',
      ],
      [
        'referrals payments: date object',
        ['referrals', 'payments', ID],
        [{ id: 'p1', amount: 1, date: { on: 1 }, procedures: [] }],
        'payments: item 1: date is an object, not text',
      ],
      [
        'referrals notifications: visit id list',
        ['referrals', 'notifications', ID],
        [{ id: 'n1', channel: 'sms', status: 'sent', visit_id: ['v1'] }],
        'notifications: item 1: visit_id is a list, not text',
      ],
      [
        'law-firms create: a list',
        ['law-firms', 'create', '--name', 'N', '--city', 'C', '--state', 'NY', '--yes'],
        [1],
        'the created law firm is a list, not an object',
      ],
    ])('%s', async ([, args, body, where]) => {
      answer = JSON.stringify(body);
      const r = await cli(args);
      expectUnreadable(r, where);
    });

    it('referrals create: a created referral of the wrong shape', async () => {
      answer = JSON.stringify({ referral: referral({ visits: 'soon' }) });
      const file = join(dir.path, 'r.json');
      await import('node:fs').then((fs) => fs.writeFileSync(file, '{"patient":{}}'));
      const r = await cli(['referrals', 'create', '--file', file, '--yes']);
      expectUnreadable(r, 'the created referral: visits is text, not a list');
    });

    it('no list at all: --json fails too, so the hint names imaging api with the path (quoted when it must be)', async () => {
      answer = JSON.stringify({ mappings: 'none' });
      for (const extra of [[], ['--json']]) {
        const r = await cli(['cpt', '73721', ...extra]);
        expect(r.code).toBe(1);
        expect(r.stderr).not.toContain('--json shows');
        expect(r.stderr).toContain("See the answer as sent with: imaging api '/api/v2/cpt_codes?code=73721'");
      }
    });

    it('JSON output prints the items as sent', async () => {
      answer = JSON.stringify([{ code: '73721', contrast: { with: 1 } }, null]);
      const r = await cli(['cpt', '73721', '--json']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([{ code: '73721', contrast: { with: 1 } }, null]);
    });
  });

  describe('referrals export', () => {
    it('visits as an object stops the export with where, and leaves no file', async () => {
      answer = JSON.stringify({
        referrals: [referral({ id: '9d0c2b9e-1111-4222-8333-444455556666' }), referral({ visits: { a: 1 } })],
        meta: { total_pages: 1 },
      });
      const out = join(dir.path, 'visits.csv');
      const r = await cli(['referrals', 'export', '--rows', 'visit', '-o', out]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `error: the server sent an answer this tool cannot read: referral ${ID}: visits is an object, not a list`,
      );
      expect(r.stderr).toContain(`  request id: ${REQUEST_ID}\n`);
      noStack(r.stderr);
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(dir.path).filter((f) => f.includes('partial'))).toEqual([]);
    });

    it('a nested value in a text column is written as its JSON, not [object Object]', async () => {
      answer = JSON.stringify({
        referrals: [withProcedure({ contrast: { with: 1 } })],
        meta: { total_pages: 1 },
      });
      const r = await cli(['referrals', 'export', '--rows', 'procedure', '--format', 'ndjson']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).contrast).toBe('{"with":1}');
    });

    // The page is parsed and its depth refused before any format writes: 200,000 deep for one
    // format, 20,000 (past what any recursive walk survives) for the other two.
    it.for<[string, number]>([
      ['csv', 200_000],
      ['ndjson', 20_000],
      ['json', 20_000],
    ])('JSON nested deep stops a %s export with where, and leaves no file', async ([format, depth]) => {
      answer = `{"referrals":[${deep(depth)}],"meta":{"total_pages":1}}`;
      const out = join(dir.path, `deep.${format}`);
      const r = await cli(['referrals', 'export', '--format', format, '-o', out]);
      expectUnreadable(r, 'the referral list, page 1: nested more than 256 levels deep');
      expect(existsSync(out)).toBe(false);
    });

    it('a total_count that is not a number is no count: nothing of its text reaches stderr', async () => {
      answer = JSON.stringify({
        referrals: [referral()],
        meta: { total_pages: 1, total_count: '9\nerror: forged count' },
      });
      const r = await cli(['referrals', 'export', '--format', 'ndjson']);
      expect(r.code).toBe(0);
      expect(r.stderr).not.toContain('forged');
      expect(r.stderr.split('\n').filter((l) => l.startsWith('error:'))).toEqual([]);
    });
  });

  describe('error answers with strange `errors` keep their exit code', () => {
    let status = 400;
    let errorBody = '';
    let errServer: Awaited<ReturnType<typeof testServer>>;
    beforeAll(async () => {
      errServer = await testServer((_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req-err-9' });
        res.end(errorBody);
      });
    });
    afterAll(() => errServer.close());
    const errCli = (args: string[]) =>
      run(['--env', 'production', '--base-url', errServer.url, ...args], { env: env() });

    // An error body is read the same whatever its status, before the status is acted on: 200,000
    // deep for a status answered at once; 20,000 (twice what a recursive walk survives) for one tried
    // again, read on each of its three tries; each other status keeps its exit code with errors
    // nested deeper than any limit the tool sets.
    it.for<[string, number, number, number]>([
      ['200,000', 400, 7, 200_000],
      ['1,000', 401, 3, 1_000],
      ['1,000', 404, 4, 1_000],
      ['1,000', 422, 7, 1_000],
      ['1,000', 429, 6, 1_000],
      ['20,000', 500, 1, 20_000],
    ])('errors nested %s deep on HTTP %i: exit %i with the request id', async ([, s, code, depth]) => {
      status = s;
      errorBody = `{"error":"bad","errors":[${deep(depth)}]}`;
      for (const args of [['modalities'], ['api', '/modalities']]) {
        const r = await errCli(args);
        expect(r.code).toBe(code);
        expect(r.stderr).toContain('error: bad\n');
        expect(r.stderr).toContain('  request id: req-err-9\n');
        expect(r.stderr).toContain('    - [[[[[[[[[…]]]]]]]]]\n');
        noStack(r.stderr);
      }
    });

    it('field errors nested deep, or objects: compact JSON, never [object Object]', async () => {
      status = 422;
      errorBody = JSON.stringify({ error: 'bad', errors: { name: [{ a: 1 }], city: 'blank' } }).replace(
        '{"a":1}',
        `{"a":1}],"zip":[${deep(200_000)}`,
      );
      const r = await errCli(['modalities']);
      expect(r.code).toBe(7);
      expect(r.stderr).toContain('    - name {"a":1}\n');
      expect(r.stderr).toContain('    - zip [[[[[[[[[…]]]]]]]]]\n');
      expect(r.stderr).toContain('    - city blank\n');
      expect(r.stderr).not.toContain('[object Object]');
      noStack(r.stderr);
    });

    it('a long item is cut, and many items are cut to 20 with a note', async () => {
      status = 400;
      errorBody = JSON.stringify({
        error: 'bad',
        errors: Array.from({ length: 50 }, (_, i) => ({ n: i, t: 'y'.repeat(1000) })),
      });
      const r = await errCli(['modalities']);
      expect(r.code).toBe(7);
      const items = r.stderr.split('\n').filter((l) => l.startsWith('    - '));
      expect(items).toHaveLength(21);
      expect(items[20]).toBe('    - (further errors left out)');
      expect(items[0]?.length).toBeLessThan(320);
      expect(items[0]).toMatch(/^ {4}- \{"n":0,"t":"y+…$/);
    });
  });

  describe('a list answer with no list in it', () => {
    it.for<[string, unknown, string]>([
      ['null', null, 'the list is null, not a list or an object'],
      [
        'an empty object',
        {},
        'the list is an object with no list of records in it (expected icd10_codes: [...])',
      ],
      ['text', 'x', 'the list is text, not a list or an object'],
      ['a number', 42, 'the list is a number, not a list or an object'],
      ['the member as text', { icd10_codes: 'x' }, 'the list: icd10_codes is text, not a list'],
      [
        'two lists',
        { a: [1], b: [2] },
        'the list: 2 members are lists, none of them "icd10_codes"; cannot tell which holds the records',
      ],
    ])('icd10 answered with %s', async ([, body, where]) => {
      answer = JSON.stringify(body);
      expectUnreadable(await cli(['icd10', 'knee']), where);
    });

    it.for<[string, string[], unknown, string]>([
      [
        'law-firms search',
        ['law-firms', 'search', 'x'],
        { a: 1 },
        'the list is an object with no list of records in it (expected law_firms: [...])',
      ],
      [
        'referrals list',
        ['referrals', 'list'],
        { referrals: { a: 1 } },
        'the list: referrals is an object, not a list',
      ],
      [
        'api --paginate',
        ['api', '/icd10_codes', '--paginate'],
        { a: [1], b: [2] },
        'the list: 2 members are lists; cannot tell which holds the records',
      ],
    ])('%s', async ([, args, body, where]) => {
      answer = JSON.stringify(body);
      expectUnreadable(await cli(args), where);
    });

    it('referrals export: exit 1, where and the request id, no file left', async () => {
      answer = JSON.stringify({ referrals: { a: 1 } });
      const out = join(dir.path, 'out.csv');
      const r = await cli(['referrals', 'export', '-o', out]);
      expectUnreadable(r, 'the list: referrals is an object, not a list');
      expect(existsSync(out)).toBe(false);
    });
  });

  describe('created records and page hints are checked', () => {
    const create = ['law-firms', 'create', '--name', 'N', '--city', 'C', '--state', 'NY', '--yes'];
    it.for<[unknown, string]>([
      [{ law_firm: { name: { a: 1 } } }, 'the created law firm: name is an object, not text'],
      [{ name: [1, 2], address_line_1: { x: 1 } }, 'the created law firm: name is a list, not text'],
      [{ law_firm: 'x' }, 'the created law firm is text, not an object'],
    ])('law-firms create answered %j', async ([body, where]) => {
      answer = JSON.stringify(body);
      const r = await cli(create);
      expectUnreadable(r, where);
      expect(r.stdout).toBe('');
    });

    it.for<[unknown, string]>([
      [null, 'null'],
      ['s', 'text'],
      [42, 'a number'],
    ])('referrals create answered %j', async ([body, kind]) => {
      answer = JSON.stringify(body);
      const file = join(dir.path, 'r.json');
      writeFileSync(file, '{"patient":{}}');
      const r = await cli(['referrals', 'create', '--file', file, '--yes']);
      expectUnreadable(r, `the created referral is ${kind}, not an object`);
      expect(r.stderr).not.toContain('Created referral');
    });

    it('icd10: a page hint from meta shows numbers only', async () => {
      answer = JSON.stringify({ icd10_codes: [{ code: 'M23' }], meta: { current_page: {}, total_pages: 3 } });
      const bad = await cli(['icd10', 'knee']);
      expect(bad.code).toBe(0);
      expect(bad.stderr).not.toContain('Page');
      expect(bad.stderr).not.toContain('[object Object]');
      answer = JSON.stringify({
        icd10_codes: [{ code: 'M23' }],
        meta: { current_page: 1, total_pages: 3, next_page: 2 },
      });
      const good = await cli(['icd10', 'knee']);
      expect(good.stderr).toContain('Page 1 of 3. Next: --page 2, or --all.');
    });
  });
});

describe('webhook listen --forward-to: a target that never finishes answering', () => {
  /**
   * --timeout is one deadline for the whole answer, not an idle timer that every byte resets: raw
   * TCP receivers on 127.0.0.1 that drip a header a byte at a time, or send interim 1xx answers
   * for ever, faster than the deadline, against the real binary of `webhook send` and of
   * `webhook listen --forward-to`. Then URL and --set inputs that used to go wrong: port 0 (Node
   * sends to port 80) and a 5000-level --set (a stack overflow).
   */
  const SECRET = 'whsec-deadline-test-41d9';

  const sf = secretFileFixture(SECRET);

  /** A raw receiver: once a request's head has come, `onRequest` drives the socket. */
  let listener: ChildProcessWithoutNullStreams | undefined;
  afterAll(() => {
    listener?.kill('SIGKILL');
  });

  it('the sender gets 504 once --timeout has passed, and the listener says so', async () => {
    const target = await rawReceiver(DRIPS['102 Processing for ever']!);
    try {
      listener = spawn(
        process.execPath,
        [
          BIN,
          'webhook',
          'listen',
          '--port',
          '0',
          '--json',
          '--secret-file',
          sf.secretFile,
          '--forward-to',
          target.url,
          '--timeout',
          '300',
        ],
        { env: { PATH: process.env.PATH, IMAGING_CONFIG_DIR: '/nonexistent/imaging-test-config' } },
      );
      const l = listener;
      let out = '';
      l.stdout.on('data', (d) => {
        out += d;
      });
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        l.stderr.on('data', (d) => {
          err += d;
          const m = /on (http:\/\/\S+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        l.on('exit', () => reject(new Error(`listen exited: ${err}`)));
      });
      const started = Date.now();
      const send = await spawnCli([
        'webhook',
        'send',
        'visit.status_changed',
        '--to',
        url,
        '--secret-file',
        sf.secretFile,
        '--timeout',
        '10000',
        '--json',
      ]);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(send.exitCode, send.stderr).toBe(1);
      expect(JSON.parse(send.stdout)[0]).toMatchObject({ status: 504, ok: false });
      expect(send.stderr).toMatch(/the receiver answered 504 Gateway Timeout, not a 2xx/);
      await expect.poll(() => out.includes('\n'), { timeout: 2000 }).toBe(true);
      const line = JSON.parse(out.split('\n')[0]!);
      expect(line).toMatchObject({ valid: true, response_status: 504 });
      expect(line.forwarded_status).toBe(`no answer from http://127.0.0.1:${target.port} within 300 ms`);
      await expect.poll(() => target.open(), { timeout: 2000 }).toBe(0);
    } finally {
      await target.close();
    }
  });
});
