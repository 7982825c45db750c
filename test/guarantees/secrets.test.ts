import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../reliability.js';
import { InterruptedError } from '../../src/errors.js';
import { COMMANDS } from '../../src/registry.js';
import { signatureHeaderValue } from '../../src/webhook/sign.js';
import { fakeIO, json, mockFixture, type RunResult, run, tempDir, testServer } from '../helpers.js';

/**
 * Secrets and patient data. Every command runs with --verbose against the emulator with a
 * recognisable token, webhook secret and patient; the token and secret must appear in no output,
 * trace, error or file but the config store, and the patient's name in no trace.
 */

const TOKEN = 'mock-LEAKCHECK-TOKEN-c0ffee4242';
const SECRET = 'LEAKCHECK-WEBHOOK-SECRET-5eed';
const PATIENT = { first_name: 'Zebulon', last_name: 'Leakcheckovich' };

const fx = mockFixture({ referrals: 40, autoBookDelayMs: 50 });
const home = tempDir();
const work = tempDir();
const secretFile = join(work.path, 'secret.txt');
let referralId = '';

beforeAll(async () => {
  await fx.start();
  writeFileSync(secretFile, `${SECRET}\n`);
  // The recognisable patient, created through the CLI itself.
  const r = await run(
    ['--env', 'local', '--base-url', fx.mock.url, 'referrals', 'create', '--file', '-', '--json'],
    {
      env: { IMAGING_CONFIG_DIR: home.path, IMAGING_TOKEN: TOKEN },
      stdin: JSON.stringify({ line_of_business: 'personal_injury', patient: PATIENT }),
    },
  );
  referralId = JSON.parse(r.stdout).id;
});
afterAll(async () => {
  await fx.stop();
  home.cleanup();
  work.cleanup();
});

const leaks = (text: string) =>
  [TOKEN, SECRET, TOKEN.slice(5, 25), SECRET.slice(0, 20)].filter((s) => text.includes(s));

describe('no secret in any output, trace, error or file', () => {
  // With the reference-data cache on: its files are checked below like every other file written.
  const cacheDir = join(home.path, 'cache');
  const env = () => ({
    IMAGING_ENV: 'local',
    IMAGING_CONFIG_DIR: home.path,
    IMAGING_BASE_URL: fx.mock.url,
    IMAGING_CACHE_DIR: cacheDir,
  });
  const exportFile = join(work.path, 'export.csv');
  const exportJson = join(work.path, 'export.json');
  const body = Buffer.from(
    JSON.stringify({
      event_id: '9b2d8f3e-4c1a-4f6b-9a7e-2d5c8b1f0e3a',
      event_name: 'visit.status_changed',
      status: 'booked',
      changes: { status: ['ready_to_book', 'booked'] },
      visit_id: '1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10',
      occurred_at: '2026-11-21T19:00:00Z',
      referral: { reference: 'R-1', patient: PATIENT },
    }),
  );
  const bodyFile = join(work.path, 'body.json');
  writeFileSync(bodyFile, body);
  const ts = String(Math.floor(Date.now() / 1000));
  const captureFile = join(work.path, 'capture.http');
  writeFileSync(
    captureFile,
    Buffer.concat([
      Buffer.from(
        `POST / HTTP/1.1\r\nX-Service-Event: visit.status_changed\r\nX-Service-Timestamp: ${ts}\r\nX-Service-Signature: ${signatureHeaderValue(Buffer.from(SECRET), ts, body, 'hex')}\r\nContent-Length: ${body.length}\r\n\r\n`,
      ),
      body,
    ]),
  );

  // Every command, with --verbose. [argv, stdin?, extra env?]
  const commands: Array<[string[], string?, NodeJS.ProcessEnv?]> = [
    [['auth', 'login', '--with-token'], TOKEN],
    [['auth', 'status']],
    [['auth', 'status', '--check']],
    [['auth', 'status', '--json']],
    // the sandbox meter: the emulator standing in for a sandbox writes allowance.log
    [['modalities', '--env', 'sandbox']],
    [['auth', 'allowance', '--env', 'sandbox', '--used', '7']],
    [['auth', 'allowance', '--env', 'sandbox', '--json']],
    [['referrals', 'export', '--dry-run', '--env', 'sandbox']],
    [['config', 'list']],
    [['config', 'list', '--json']],
    [['config', 'path']],
    [['cache', 'path']],
    [['cache', 'clear']],
    [['config', 'set', 'env', 'local']],
    [['config', 'get', 'env']],
    [['config', 'unset', 'env']],
    [['modalities']],
    [['body-parts', '--modality', 'MRI']],
    [['cpt', '73721']],
    [['icd10', 'knee', '--all']],
    [['law-firms', 'search', 'law']],
    [['law-firms', 'create', '--name', 'Leakcheck Law', '--city', 'Reno', '--state', 'NV']],
    [['sso']],
    [['referrals', 'list', '--all', '--param', `q=${PATIENT.last_name}`]],
    [['referrals', 'list', '--json']],
    [['referrals', 'find', PATIENT.last_name]],
    [['referrals', 'find', `${PATIENT.last_name}, ${PATIENT.first_name}`, '--format', 'csv']],
    [['referrals', 'get', '__ID__']],
    [['referrals', 'get', '__ID__', '--json']],
    [['referrals', 'documents', '__ID__']],
    [['referrals', 'documents', '__ID__', '--format', 'csv']],
    [['referrals', 'watch', '__ID__', '--within', '0s']],
    [['referrals', 'watch', '__ID__', '--within', '0s', '--format', 'ndjson']],
    [['referrals', 'payments', '__ID__']],
    [['referrals', 'payments', '__ID__', '--format', 'csv']],
    [['referrals', 'notifications', '__ID__', '--json']],
    [['referrals', 'notifications', '__ID__'], undefined, { IMAGING_TOKEN: 'mock-disabled' }],
    [['referrals', 'create', '--file', '-'], JSON.stringify({ patient: PATIENT })],
    [['referrals', 'create', '--file', '-'], JSON.stringify({ patient: { first_name: PATIENT.first_name } })],
    [['referrals', 'update', '__ID__', '--wc-number', PATIENT.last_name, '--icd10', '+M54.50']],
    [
      ['referrals', 'update', '__ID__', '--file', '-', '--dry-run'],
      JSON.stringify({ referring_provider: PATIENT.last_name }),
    ],
    [['referrals', 'auto-book', '__ID__', '--strategy', 'closest', '--radius', '5', '--wait']],
    [
      ['referrals', 'auto-book', '__ID__', '--strategy', 'soonest', '--radius', '5'],
      undefined,
      { IMAGING_TOKEN: 'mock-disabled' },
    ],
    [['referrals', 'export', '-o', exportFile, '--param', `patient_name=${PATIENT.first_name}`]],
    [['referrals', 'export', '--format', 'json', '-o', exportJson, '--rows', 'visit']],
    [['referrals', 'download', '__ID__', '--reports', '--documents', '-D', join(work.path, 'downloads')]],
    // Reports by a signed storage link and on the API's origin, and a document.
    [
      [
        'referrals',
        'download',
        'R-240004',
        'R-240002',
        '--reports',
        '--documents',
        '-D',
        join(work.path, 'downloads'),
      ],
    ],
    [['api', '/referrals/__ID__']],
    [
      [
        'api',
        'POST',
        '/patients',
        '-f',
        `first_name=${PATIENT.first_name}`,
        '-f',
        `last_name=${PATIENT.last_name}`,
      ],
    ],
    [['webhook', 'sign', '--body', bodyFile, '--secret-file', secretFile]],
    [
      ['webhook', 'sign', '--body', bodyFile, '--curl', 'http://127.0.0.1:9/x'],
      undefined,
      { IMAGING_WEBHOOK_SECRET: SECRET },
    ],
    [['webhook', 'sample', 'visit.status_changed', '--set', 'status=booked']],
    [['webhook', 'send', 'visit.status_changed', '--print', '--secret-file', secretFile]],
    [
      ['webhook', 'send', 'notification.status_changed', '--to', 'http://127.0.0.1:9/', '--duplicate'],
      undefined,
      { IMAGING_WEBHOOK_SECRET: SECRET },
    ],
    [['webhook', 'verify', '--request', captureFile, '--secret-file', secretFile]],
    [['webhook', 'verify', '--request', captureFile, '--secret-file', secretFile, '--json']],
    [
      ['webhook', 'verify', '--request', captureFile],
      undefined,
      { IMAGING_WEBHOOK_SECRET: `${SECRET}-wrong` },
    ],
    [['completion', 'bash']],
    [['sandbox', 'advance', 'R-240008', '--to', 'booked']],
    [['sandbox', 'fixture', 'booked']],
    [['sandbox', 'test-webhook', '--event', 'visit.status_changed']],
    // error paths
    [['modalities'], undefined, { IMAGING_TOKEN: 'mock-expired' }],
    [['referrals', 'get', '00000000-0000-4000-8000-000000000000']],
    [['cpt', '73721', '--base-url', 'http://imaging.example.com']],
    [['auth', 'logout']],
  ];

  it('every command in the registry is in the table (or named below with where it is checked)', () => {
    const elsewhere: Record<string, string> = {
      'webhook listen': 'its own test below (a server the test posts to)',
      mock: 'the emulator itself: every row above talks to it',
      'auth token': 'prints the token on purpose: test/commands/auth/token.test.ts',
    };
    const covered = (path: readonly string[]) =>
      commands.some(([argv]) => path.every((word, i) => argv[i] === word));
    const missing = COMMANDS.map((c) => c.path)
      .filter((p) => !covered(p) && !(p.join(' ') in elsewhere))
      .map((p) => p.join(' '));
    expect(missing).toEqual([]);
  });

  it.for(commands)('%j', async ([argv, stdin, extra], { task }) => {
    const args = argv.map((a) => a.replace('__ID__', referralId));
    // The token comes from the store (after login) or from IMAGING_TOKEN, never from argv.
    const r: RunResult = await run([...args, '--verbose'], {
      env: { ...env(), IMAGING_TOKEN: argv[0] === 'auth' && argv[1] === 'login' ? '' : TOKEN, ...extra },
      ...(stdin !== undefined ? { stdin } : {}),
    });
    task.meta.leakScans = 2;
    const found = [...leaks(r.stdout), ...leaks(r.stderr)];
    task.meta.leaksFound = found.length;
    expect(found).toEqual([]);
    // The trace (stderr) never carries a patient's name, not even in a query string.
    expect(r.stderr).not.toContain(PATIENT.last_name);
    expect(r.stderr).not.toContain(PATIENT.first_name);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it('the files written hold no secret, and are owner-only; only the config store holds the token', ({
    task,
  }) => {
    const cached = readdirSync(join(cacheDir, 'reference')).map((f) => join(cacheDir, 'reference', f));
    expect(cached.length).toBeGreaterThanOrEqual(4); // modalities, body parts, CPT, ICD-10 pages
    const downloads = join(work.path, 'downloads');
    const saved = readdirSync(downloads).map((f) => join(downloads, f));
    expect(saved.length).toBeGreaterThanOrEqual(3);
    const files = [exportFile, exportJson, ...cached, ...saved];
    for (const f of files) {
      expect(statSync(f).mode & 0o777).toBe(0o600);
      expect(leaks(readFileSync(f, 'utf8'))).toEqual([]);
    }
    expect(readFileSync(exportFile, 'utf8')).toContain(PATIENT.last_name); // the export itself does carry the data
    const store = join(home.path, 'config.json');
    expect(statSync(store).mode & 0o777).toBe(0o600);
    // The allowance meter is keyed by a hash of origin and token: the token is not in it.
    const meter = join(home.path, 'allowance.log');
    expect(statSync(meter).mode & 0o777).toBe(0o600);
    expect(leaks(readFileSync(meter, 'utf8'))).toEqual([]);
    expect(statSync(home.path).mode & 0o777).toBe(0o700);
    expect(readdirSync(work.path).sort()).toEqual([
      'body.json',
      'capture.http',
      'downloads',
      'export.csv',
      'export.json',
      'secret.txt',
    ]);
    task.meta.leakScans = files.length;
    task.meta.leaksFound = 0;
  });

  it('webhook listen prints and answers no secret, even for a bad delivery', async ({ task }) => {
    const ac = new AbortController();
    const fake = fakeIO();
    const { main } = await import('../../src/main.js');
    const done = main(['webhook', 'listen', '--port', '0', '--verbose'], {
      io: fake.io,
      env: { IMAGING_WEBHOOK_SECRET: SECRET },
      signal: ac.signal,
    });
    let url = '';
    while (!url) {
      url = /on (http:\/\/\S+)/.exec(fake.stderr())?.[1] ?? '';
      await new Promise((r) => setTimeout(r, 10));
    }
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'X-Service-Timestamp': ts, 'X-Service-Signature': 'v1=00' },
    });
    const answer = await res.text();
    ac.abort(new InterruptedError('SIGINT'));
    await done;
    const found = [...leaks(answer), ...leaks(fake.stdout()), ...leaks(fake.stderr())];
    task.meta.leakScans = 3;
    task.meta.leaksFound = found.length;
    expect(found).toEqual([]);
  });
});

describe('the token stays on its host', () => {
  it('is refused over plain http to a host other than this machine', async () => {
    const r = await run(['modalities'], {
      env: { IMAGING_BASE_URL: 'http://10.1.2.3:8080', IMAGING_TOKEN: TOKEN, IMAGING_CONFIG_DIR: home.path },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('refusing to send the API token over plain http to 10.1.2.3:8080');
  });

  it('is not forwarded across a redirect to another host (two local servers)', async () => {
    const other = await testServer((_req, res) => json(res, 200, []), '127.0.0.2');
    const first = await testServer((_req, res) => {
      res.writeHead(307, { location: `${other.url}/api/v2/modalities` });
      res.end();
    });
    try {
      const r = await run(['modalities', '--verbose'], {
        env: {
          IMAGING_ENV: 'local',
          IMAGING_BASE_URL: first.url,
          IMAGING_TOKEN: TOKEN,
          IMAGING_CONFIG_DIR: home.path,
        },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('redirected to another host (127.0.0.2');
      expect(first.seen[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(other.seen).toHaveLength(0);
    } finally {
      await first.close();
      await other.close();
    }
  });
});

describe('a parser error never echoes an option value', () => {
  /**
   * The parser never prints the value of an option it refuses: `--opt=VALUE` is named as `--opt`,
   * on every command and before or after the command's name, so a secret typed there does not reach
   * a terminal, a CI log or a bug report.
   */
  const SECRET = 'sk_live_d0n0tpr1nt';

  it.for([
    ['auth', 'login', `--with-token=${SECRET}`],
    ['modalities', `--frobnicate=${SECRET}`],
    [`--frobnicate=${SECRET}`, 'modalities'],
    ['referrals', `--frobnicate=${SECRET}`, 'list'],
    ['referrals', 'list', `--password=${SECRET}`],
    ['webhook', 'verify', `--secret=${SECRET}`],
    ['mock', `--webhook-secret=${SECRET}`],
    [`--token=${SECRET}`, 'cpt', '73721'],
    ['cpt', `-y${SECRET}`, '73721'],
    ['config', 'list', `--api-token=${SECRET}`],
    ['modalities', '--timeout', SECRET],
    ['mock', '--port', SECRET],
    ['referrals', 'list', '--param', SECRET],
    ['api', '/referrals', '-f', SECRET],
  ])('imaging %s …: exit 2, the option named, its value never', async (argv) => {
    const r = await run(argv, { env: { IMAGING_CONFIG_DIR: '/nonexistent-imaging-test' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: /);
    expect(r.stderr + r.stdout).not.toContain(SECRET);
    expect(r.stderr + r.stdout).not.toContain('d0n0t');
  });

  it('a flag that takes no value says so, by name (auth login --with-token=…)', async () => {
    const r = await run(['auth', 'login', `--with-token=${SECRET}`]);
    expect(r.stderr).toBe(
      'error: --with-token takes no value\nhint: Give --with-token alone, without "=…".\n',
    );
  });

  it('an unknown option is in the one error block, with a suggestion from the global options too', async () => {
    const r = await run(['referrals', 'list', `--formt=${SECRET}`]);
    expect(r.stderr).toBe("error: unknown option '--formt'\nhint: Did you mean --format?\n");
  });
});

describe('patient data in a URL or a request id stays out of traces and error blocks', () => {
  // A server that redirects a referral's read (same origin) to a search carrying a name, a date of birth
  // and a signature, and answers that with a 500 whose X-Request-Id echoes the URL.
  const config = tempDir();
  let server: Awaited<ReturnType<typeof testServer>>;
  const ID = '00000000-0000-4000-8000-0000000000aa';
  beforeAll(async () => {
    server = await testServer((req, res) => {
      if (req.url === `/api/v2/referrals/${ID}`) {
        res.writeHead(302, {
          location: '/api/v2/search?q=Garcia%2C%20Mary&dob=1992-03-10&sig=s3cr3tsig&page=1',
        });
        return res.end();
      }
      if (req.url?.startsWith('/api/v2/cpt_codes'))
        return json(res, 500, { message: 'down' }, { 'x-request-id': 'req_0123abc.def:9-x' });
      res.writeHead(500, { 'content-type': 'text/html', 'x-request-id': `req_${req.url}` });
      res.end(`<html>oops ${req.url}</html>`);
    });
  });
  afterAll(async () => {
    await server.close();
    config.cleanup();
  });
  const env = () => ({ IMAGING_ENV: 'local', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: config.path });

  it('every query value is redacted but paging; a request id that is not an id is [redacted]', async () => {
    const { piped } = await import('../fake-io.js');
    const r = await piped(['referrals', 'get', ID, '--verbose'], { env: env() });
    expect(r.code).toBe(1);
    for (const leak of ['Garcia', 'Mary', '1992-03-10', 's3cr3tsig', 'req_/'])
      expect(r.stderr).not.toContain(leak);
    expect(r.stderr).toContain('/api/v2/search?q=[redacted]&dob=[redacted]&sig=[redacted]&page=1');
    expect(r.stderr).toMatch(/< 500 .*request-id=\[redacted\]/);
    expect(r.stderr).toMatch(/^ {2}request id: \[redacted\]$/m);
  });

  it('a reference lookup keeps its code, and an id that looks like one is shown as sent', async () => {
    const { piped } = await import('../fake-io.js');
    const r = await piped(['api', '/cpt_codes?code=73721&modality=MRI&q=x', '--verbose'], { env: env() });
    expect(r.stderr).toContain('/api/v2/cpt_codes?code=73721&modality=MRI&q=[redacted]');
    expect(r.stderr).toContain('request-id=req_0123abc.def:9-x');
  });
});
