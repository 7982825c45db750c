import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InterruptedError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import { fakeIO, json, mockFixture, ROOT, run, tempDir, testServer } from '../helpers.js';

// Issue 9, item 16: words that say what they mean.

const fx = mockFixture({ referrals: 40 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

describe('the most advanced visit status is named for what it is', () => {
  it('R-240011 (visits canceled, booked, co_signed) shows booked under MOST ADVANCED VISIT, on a terminal and piped', async () => {
    const r = fx.mock.referrals.slice(0, 40).find((x) => x.reference === 'R-240011')!;
    expect(r.visits.map((v) => v.status).sort()).toEqual(['booked', 'canceled', 'co_signed']);
    for (const tty of [true, false]) {
      const list = await run(['referrals', 'list', '--per-page', '20'], {
        env: fx.env(),
        stdoutIsTTY: tty,
        columns: 200,
      });
      expect(list.code, list.stderr).toBe(0);
      // On a terminal the headers are bold: compare the text.
      const [header, ...rows] = list.stdout.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
      expect(header).toContain('MOST ADVANCED VISIT');
      expect(header).not.toContain('LATEST');
      const row = rows.find((l) => l.startsWith('R-240011'))!;
      const col = header!.split(/ {2,}/).indexOf('MOST ADVANCED VISIT');
      expect(row.split(/ {2,}/)[col]).toBe('booked');
      const get = await run(['referrals', 'get', r.id], { env: fx.env(), stdoutIsTTY: tty, columns: 200 });
      expect(get.stdout.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/Most advanced visit:\s+booked/);
      expect(get.stdout).not.toMatch(/Latest visit/i);
    }
  });
});

/** Lines of src/ (comments left out) that match `re`, as `path:line: text`. */
function srcLinesMatching(re: RegExp, skip: (path: string) => boolean = () => false): string[] {
  const offenders: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts') && !skip(p))
        readFileSync(p, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (/^\s*(\/\/|\*)/.test(line)) return;
            if (re.test(line)) offenders.push(`${p.slice(ROOT.length)}:${i + 1}: ${line.trim()}`);
          });
    }
  };
  walk(join(ROOT, 'src'));
  return offenders;
}

describe('one formatter for counts', () => {
  it('every count in src/ is grouped by num() (src/util/plural.ts), never toLocaleString or Intl.NumberFormat (they load ICU: ~7 MB of memory, README "Speed")', () => {
    expect(
      srcLinesMatching(/toLocaleString|Intl\.NumberFormat/, (p) => p.endsWith(join('util', 'plural.ts'))),
    ).toEqual([]);
  });
});

describe('one warning prefix', () => {
  it('every warning in src/ starts "warning:" (as "error:" and "hint:"), never Warning:, WARNING or warn:', () => {
    expect(srcLinesMatching(/[`'"(](Warning|WARNING|Warn|warn|WARN)\s*[:!-]/)).toEqual([]);
  });

  it('every note in src/ starts "Note:" (webhook send said "note:"), never note:, NOTE or N.B.', () => {
    // A message that starts with a note label (not a `(note: …)` inside a line).
    expect(srcLinesMatching(/[`'"](note|NOTE|Nota|NB|N\.B\.)\s*[:!-]/)).toEqual([]);
  });

  it('webhook send to an http URL says "Note:" as every other note', async () => {
    const r = await run(
      ['webhook', 'send', 'notification.status_changed', '--to', 'http://receiver.example/x', '--print'],
      {
        env: { IMAGING_WEBHOOK_SECRET: 'whsec_test', IMAGING_CONFIG_DIR: '/nonexistent/imaging-test-config' },
      },
    );
    expect(r.stderr).toContain(
      'Note: the service sends notification.status_changed only to https webhook URLs.',
    );
    expect(r.stderr).not.toMatch(/^note:/m);
  });

  it('a repeated record on a later page is reported with "warning:"', async () => {
    const page = (n: number) => ({
      icd10_codes: [
        { id: `00000000-0000-4000-8000-00000000000${n === 1 ? 1 : 1}`, code: 'A', short_description: 'x' },
        { id: `00000000-0000-4000-8000-00000000000${n + 1}`, code: 'B', short_description: 'y' },
      ],
      meta: { current_page: n, total_pages: 2, total_count: 4, next_page: n === 1 ? 2 : null },
    });
    const srv = await testServer((req, res) => {
      const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      json(res, 200, page(n));
    });
    try {
      const r = await run(['icd10', 'a', '--all', '--json'], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: dir.path },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^warning: 1 record came again on a later page/m);
    } finally {
      await srv.close();
    }
  });
});

describe('webhook listen: an unsigned delivery is said once', () => {
  it('the line reads "unsigned delivery; there is no … header", not "unsigned delivery; unsigned: …"', async () => {
    const secret = join(dir.path, 'secret.txt');
    writeFileSync(secret, 'test_secret_123\n');
    const ac = new AbortController();
    const fake = fakeIO();
    const done = main(['webhook', 'listen', '--port', '0', '--secret-file', secret], {
      io: fake.io,
      env: {},
      signal: ac.signal,
    });
    let url = '';
    // Polls for the line that says it listens (a condition, not a fixed wait).
    for (let i = 0; i < 400 && !url; i++) {
      url = /Listening for webhooks on (http:\/\/\S+)/.exec(fake.stderr())?.[1] ?? '';
      if (!url) await new Promise((r) => setTimeout(r, 5));
    }
    const body = JSON.stringify({ event_name: 'visit.status_changed' });
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'X-Service-Event': 'visit.status_changed' },
    });
    expect(res.status).toBe(400);
    ac.abort(new InterruptedError('SIGINT'));
    await done;
    const line = fake.stdout().trim().split('\n')[0]!;
    expect(line).toContain(
      'unsigned delivery; there is no X-Service-Signature or X-Service-Timestamp header',
    );
    expect(line).not.toMatch(/unsigned delivery; unsigned/);
  });
});

describe('"the output above is incomplete" only when it is above', () => {
  const failingServer = () =>
    testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      if (page === 2) return json(res, 404, { message: 'gone', code: 'not_found' });
      const referrals = Array.from({ length: 2 }, (_, i) => ({
        ...fx.mock.referrals.at(i),
        id: `00000000-0000-4000-8000-00000000000${i}`,
      }));
      json(res, 200, { referrals, meta: { current_page: 1, total_pages: 3, total_count: 6, next_page: 2 } });
    });

  it.each([
    [true, 'the output above is incomplete'],
    [false, 'the output sent to standard output is incomplete'],
  ])('stdout a terminal: %s -> "%s"', async (tty, words) => {
    const srv = await failingServer();
    try {
      const r = await run(['referrals', 'export', '--per-page', '2', '--concurrency', '1'], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: dir.path },
        stdoutIsTTY: tty,
      });
      expect(r.code).toBe(4);
      expect(r.stderr).toContain(words);
      if (!tty) expect(r.stderr).not.toContain('above');
    } finally {
      await srv.close();
    }
  });
});

describe('config get shows the value in use and where it comes from', () => {
  const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: dir.path, ...extra });

  it('base-url --env local: the default, as auth status shows it (not "not set")', async () => {
    const r = await run(['config', 'get', 'base-url', '--env', 'local'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('http://127.0.0.1:4010\n');
    expect(r.stderr).toBe('base-url: the default (local)\n');
    const status = JSON.parse(
      (await run(['auth', 'status', '--env', 'local', '--json'], { env: env() })).stdout,
    )[0];
    expect(status).toMatchObject({ base_url: 'http://127.0.0.1:4010', base_url_source: 'default' });
    const j = await run(['config', 'get', 'base-url', '--env', 'local', '--json'], { env: env() });
    expect(JSON.parse(j.stdout)).toEqual({
      key: 'base-url',
      value: 'http://127.0.0.1:4010',
      source: 'default',
      environment: 'local',
    });
  });

  it('stored, from IMAGING_BASE_URL, from --base-url; env from IMAGING_ENV or the default', async () => {
    await run(['config', 'set', 'base-url', 'https://stored.example.com', '--env', 'sandbox'], {
      env: env(),
    });
    const stored = await run(['config', 'get', 'base-url'], { env: env() });
    expect([stored.stdout, stored.stderr]).toEqual([
      'https://stored.example.com\n',
      'base-url: stored in the config (sandbox)\n',
    ]);
    const fromEnv = await run(['config', 'get', 'base-url'], {
      env: env({ IMAGING_BASE_URL: 'https://env.example.com' }),
    });
    expect([fromEnv.stdout, fromEnv.stderr]).toEqual([
      'https://env.example.com\n',
      'base-url: from IMAGING_BASE_URL (sandbox)\n',
    ]);
    const flag = await run(['config', 'get', 'base-url', '--base-url', 'https://flag.example.com'], {
      env: env(),
    });
    expect(flag.stdout).toBe('https://flag.example.com\n');
    expect(flag.stderr).toContain('from --base-url');
    const e = await run(['config', 'get', 'env'], { env: env() });
    expect([e.stdout, e.stderr]).toEqual(['sandbox\n', 'env: the default\n']);
    const e2 = await run(['config', 'get', 'env'], { env: env({ IMAGING_ENV: 'local' }) });
    expect([e2.stdout, e2.stderr]).toEqual(['local\n', 'env: from IMAGING_ENV\n']);
  });

  it('production with nothing stored: exit 1, not set', async () => {
    const r = await run(['config', 'get', 'base-url', '--env', 'production'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('base-url is not set for production');
  });
});
