import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseFault } from '../../src/emulator/faults.js';
import { json, mockFixture, ROOT, run, tempDir, testServer } from '../helpers.js';
import type { Pane } from '../terminal.js';

let dir: ReturnType<typeof tempDir>;

beforeEach(() => {
  dir = tempDir();
});

afterEach(() => dir.cleanup());

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

describe('counts in messages have thousands separators', () => {
  const fx = mockFixture({ referrals: 60 });

  const big = mockFixture({ referrals: 1500 });

  beforeAll(() => Promise.all([fx.start(), big.start()]));

  afterAll(() => Promise.all([fx.stop(), big.stop()]));

  let panes: Pane[] = [];

  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    fx.reset();
    fx.mock.faults.clear();
    dir = tempDir();
  });

  afterEach(async () => {
    await Promise.all(panes.map((p) => p.close()));
    panes = [];
    dir.cleanup();
  });

  const env = () => big.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-polish-counts' });

  it('the summary: "Exported 1,500 referral rows … from 1,500 referrals" and the visit rows too', async () => {
    big.mock.faults.clear();
    const target = `${dir.path}/all.csv`;
    const r = await run(['referrals', 'export', '-o', target, '--concurrency', '2'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /Exported 1,500 referral rows \(csv\) from 1,500 referrals read in 15 pages, \d+ requests/,
    );
    const json = await run(['referrals', 'export', '--format', 'ndjson', '--rows', 'visit'], { env: env() });
    const rows = json.stdout.trimEnd().split('\n').length;
    expect(rows).toBeGreaterThan(1000);
    expect(json.stderr).toContain(`Exported ${rows.toLocaleString('en-US')} visit rows (ndjson)`);
  });

  it('the stop: "11 complete pages (1,100 referrals) are kept"', async () => {
    big.mock.faults.add(parseFault('500:*@11', '/api/v2/referrals'));
    try {
      const r = await run(
        ['referrals', 'export', '-o', `${dir.path}/x.csv`, '--concurrency', '1', '--resumable'],
        {
          env: env(),
        },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'Export stopped: 11 complete pages (1,100 referrals) are kept in a checkpoint',
      );
    } finally {
      big.mock.faults.clear();
    }
  });
});
