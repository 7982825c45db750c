import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../../src/api/types.js';
import { parseFault } from '../../../src/emulator/faults.js';
import { ExitCode } from '../../../src/errors.js';
import { mostAdvancedVisit } from '../../../src/resources/referrals.js';
import {
  bothForms,
  expectTableForms,
  expectUsageError,
  hasEscapes,
  lines,
  piped,
  plain,
} from '../../fake-io.js';
import { json, mockFixture, run, tempDir, testServer } from '../../helpers.js';

const fx = mockFixture({ referrals: 60 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('imaging referrals list', () => {
  it('shows one page as a table, with the next page named on stderr, in both forms', async () => {
    const page = JSON.parse((await piped(['referrals', 'list', '--json'], { env: fx.env() })).stdout);
    expect(page).toHaveLength(25);
    const forms = await bothForms(['referrals', 'list'], { env: fx.env() });
    expectTableForms(
      forms,
      ['REFERENCE', 'STATUS', 'LINE OF BUSINESS', 'PATIENT', 'VISITS', 'MOST ADVANCED VISIT', 'ID'],
      page.map((r: { reference: string }) => r.reference),
    );
    const next = 'Page 1 of 3 (60 referrals). Next: --page 2, or --all.\n';
    expect(forms.piped.stderr).toBe(next);
    expect(forms.terminal.stderr.endsWith(next)).toBe(true);
    expect(forms.terminal.stderr).toMatch(/^Left out: .*\(--wide shows all\)\n/);
    expect(plain(forms.terminal.stdout)).toMatch(/^R-240001 +closed +Hernández, Emma/m);
    expect(forms.piped.stdout).toMatch(
      /^R-240001 +closed +workers_comp +Hernández, Emma +2 +contacted_for_booking +3212c76a-/m,
    );
  });

  it('walks every page with --all: a progress bar on a terminal only, the same records either way', async () => {
    const { terminal, piped: p } = await bothForms(['referrals', 'list', '--all', '--fields', 'id'], {
      env: fx.env(),
    });
    expect(terminal.code).toBe(0);
    expect(plain(terminal.stderr)).toMatch(/Listing referrals .*(\d+)\/\1 pages {2}60 records/);
    expect(terminal.stderr).toContain('\u001b[?25h'); // the cursor is shown again
    expect(p.code).toBe(0);
    expect(p.stderr).toBe('');
    expect(hasEscapes(p.stdout)).toBe(false);
    const ids = lines(p.stdout);
    expect(ids[0]).toBe('ID');
    expect(ids).toHaveLength(61);
    expect(new Set(ids).size).toBe(61);
    expect(lines(plain(terminal.stdout))).toEqual(ids);
  });

  it('writes NDJSON and CSV of every referral for scripts', async () => {
    const nd = await piped(['referrals', 'list', '--all', '--format', 'ndjson'], { env: fx.env() });
    const records = lines(nd.stdout).map((l) => JSON.parse(l));
    expect(records).toHaveLength(60);
    const csv = await piped(['referrals', 'list', '--all', '--format', 'csv', '--fields', 'id,reference'], {
      env: fx.env(),
    });
    const rows = csv.stdout.split('\r\n');
    expect(rows[0]).toBe('id,reference');
    expect(rows[1]).toBe(`${records[0].id},${records[0].reference}`);
    expect(rows).toHaveLength(62);
  });

  it('refuses --concurrency without --all, before any request', async () => {
    expectUsageError(
      await piped(['referrals', 'list', '--concurrency', '2'], { env: fx.env() }),
      /--concurrency is for --all/,
      fx.apiRequests().length,
    );
    expectUsageError(
      await piped(['referrals', 'list', '--fields', 'nope'], { env: fx.env() }),
      /nope/,
      fx.apiRequests().length,
    );
  });
});

/**
 * Every `--all` listing walks its pages with the export's pipeline
 * (api/pages.ts `fetchPagesInOrder`): pages 2..N `--concurrency` at a time (default 4), written in
 * the API's order with the bytes the one-page-at-a-time walk wrote, and a failure after records
 * reached a terminal says the output above is incomplete. (The progress line at a real terminal:
 * terminal.test.ts; a slow reader holding back requests: the unit test in pages.test.ts.)
 */

describe('pages in flight', () => {
  // A server of 9 pages that answers pages 2..9 only once `c` of them wait at once: a walk that
  // asks for one page after another never gets an answer and fails on its --timeout.
  async function pagedServer(c: number) {
    let inFlight = 0;
    let most = 0;
    const held: Array<() => void> = [];
    const server = await testServer((req, res) => {
      const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? 1);
      const body = {
        // One member holds the records: each list reads it as its list (extractList).
        records: Array.from({ length: 10 }, (_, i) => ({
          id: `r-${page}-${i}`,
          code: `C${page}.${i}`,
          name: `N${page}.${i}`,
        })),
        meta: { current_page: page, total_pages: 9, total_count: 90, next_page: page < 9 ? page + 1 : null },
      };
      inFlight++;
      most = Math.max(most, inFlight);
      const answer = (r: ServerResponse) => () => {
        inFlight--;
        json(r, 200, body);
      };
      if (page === 1) return answer(res)();
      held.push(answer(res));
      if (held.length === c) for (const a of held.splice(0)) a();
    });
    const cache = tempDir();
    // A cache folder of its own: a folder another run wrote to (root can make /nonexistent) could
    // answer from an earlier server on the same port.
    const env = {
      IMAGING_ENV: 'local',
      IMAGING_BASE_URL: server.url,
      IMAGING_CONFIG_DIR: '/nonexistent',
      IMAGING_CACHE_DIR: cache.path,
    };
    const close = async () => {
      cache.cleanup();
      await server.close();
    };
    return { server, env, most: () => most, close };
  }

  it.for(
    [
      ['referrals', 'list', '--all'],
      ['icd10', '--all', '--no-cache'],
      ['icd10', '--all'],
      ['law-firms', 'search', 'x', '--all'],
    ].map((a) => [a.join(' '), a] as const),
  )('%s: 4 pages in flight, records in the API order', async ([, args]) => {
    const { server, env, most, close } = await pagedServer(4);
    try {
      // A sequential walk waits out --timeout and fails; 10 s (of the test's 20) leaves room for a
      // loaded machine where a worker's event loop stalls (3 s failed once at load 9).
      const r = await run([...args, '--format', 'ndjson', '--timeout', '10000'], { env });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const ids = r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id);
      expect(ids).toEqual(Array.from({ length: 90 }, (_, i) => `r-${Math.floor(i / 10) + 1}-${i % 10}`));
      expect(most()).toBe(4);
      expect(server.seen.length).toBe(9);
    } finally {
      await close();
    }
  });

  it('referrals list --all --concurrency 2: 2 in flight; --concurrency without --all is a usage error', async () => {
    const { server, env, most, close } = await pagedServer(2);
    try {
      const r = await run(
        ['referrals', 'list', '--all', '--json', '--concurrency', '2', '--timeout', '3000'],
        {
          env,
        },
      );
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toHaveLength(90);
      expect(most()).toBe(2);
      const bad = await run(['referrals', 'list', '--concurrency', '2'], { env });
      expect(bad.code).toBe(ExitCode.usage);
      expect(bad.stderr).toContain('--concurrency is for --all');
      expect(server.seen.length).toBe(9);
    } finally {
      await close();
    }
  });
});

describe('a page that fails after records were written', () => {
  const fx = mockFixture({ referrals: 450 });
  beforeAll(() => fx.start());
  afterAll(() => fx.stop());
  afterEach(() => fx.mock.faults.clear());
  // Pages of 50, one at a time: pages 1-3 answer, page 4 is refused (401: not retried).
  const args = ['referrals', 'list', '--all', '--per-page', '50', '--concurrency', '1'];
  const failPage4 = () => fx.mock.faults.add(parseFault('401@3', '/api/v2/referrals'));

  it.for(['ndjson', 'json'])(
    '--format %s to a terminal: "the output above is incomplete"',
    async (format) => {
      failPage4();
      const r = await run([...args, '--format', format], { env: fx.env(), stdoutIsTTY: true });
      expect(r.code).toBe(ExitCode.auth);
      expect(r.stderr).toContain('Listing stopped after 150 referrals: the output above is incomplete.');
      expect(r.stdout.length).toBeGreaterThan(0);
    },
  );

  it('piped: the error, and "the output sent to standard output is incomplete" (as export says)', async () => {
    failPage4();
    const r = await run([...args, '--format', 'ndjson'], { env: fx.env() });
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(150);
    expect(r.stderr).toContain(
      'Listing stopped after 150 referrals: the output sent to standard output is incomplete.',
    );
    expect(r.stderr).not.toContain('output above');
  });

  it('a table to a terminal: nothing was shown, so no note', async () => {
    failPage4();
    const r = await run(args, { env: fx.env(), stdoutIsTTY: true });
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain('incomplete');
  });
});

describe('the most advanced visit status is named for what it is', () => {
  // Words that say what they mean.

  const fx = mockFixture({ referrals: 40 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

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
  it('most_advanced_visit is a field of the list: --fields (table, CSV, workbook), the CSV column, the old name with a note; JSON refuses it', async () => {
    const env = fx.env();
    const table = await run(
      ['referrals', 'list', '--per-page', '20', '--fields', 'reference,most_advanced_visit'],
      {
        env,
      },
    );
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^R-240011 +booked$/m);
    // Without --fields the CSV has it after the documented fields, which keep their places.
    const csv = await run(['referrals', 'list', '--per-page', '20', '--format', 'csv'], { env });
    const [head, ...rows] = csv.stdout.split('\r\n');
    const names = head!.split(',');
    expect(names.slice(0, 3)).toEqual(['id', 'reference', 'status']);
    const col = names.indexOf('most_advanced_visit');
    expect(col).toBeGreaterThan(names.indexOf('auto_book_request.completed_at'));
    // A CSV line's cells (quoted ones hold commas).
    const cells = (line: string) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].map((m) => m[1]);
    expect(cells(rows.find((l) => l.includes(',R-240011,'))!)[col]).toBe('booked');
    const old = await run(
      [
        'referrals',
        'list',
        '--per-page',
        '20',
        '--format',
        'csv',
        '--fields',
        'reference,latest_visit_status',
      ],
      { env },
    );
    expect(old.code, old.stderr).toBe(0);
    expect(old.stdout.split('\r\n')[0]).toBe('reference,most_advanced_visit');
    expect(old.stdout).toContain('R-240011,booked\r\n');
    expect(old.stderr).toBe(
      'Note: --fields latest_visit_status is now most_advanced_visit; the old name will stop being accepted in a later release\n',
    );
    const xlsx = await run(
      [
        'referrals',
        'list',
        '--per-page',
        '20',
        '--format',
        'xlsx',
        '--fields',
        'reference,most_advanced_visit',
      ],
      { env },
    );
    expect(xlsx.code, xlsx.stderr).toBe(0);
    for (const args of [
      ['--json', 'reference,most_advanced_visit'],
      ['--format', 'ndjson', '--fields', 'most_advanced_visit'],
    ]) {
      const before = fx.apiRequests().length;
      const json = await run(['referrals', 'list', ...args], { env });
      expect(json.code, args.join(' ')).toBe(ExitCode.usage);
      expect(json.stdout).toBe('');
      expect(json.stderr).toMatch(
        /--fields most_advanced_visit is computed by this tool, and --format n?d?json writes the records as the API sent them/,
      );
      expect(json.stderr).toMatch(/--format csv --fields/);
      expect(fx.apiRequests()).toHaveLength(before);
    }
  });
});

describe('the most advanced visit is ranked by the progress rule', () => {
  // The spec's list position put exam_not_completed (the exam did not happen) above complete.
  it.for([
    [['exam_not_completed', 'complete'], 'complete'],
    [['complete', 'exam_not_completed'], 'complete'],
    [['exam_not_completed', 'booked'], 'exam_not_completed'],
    [['exam_not_completed', 'sent_to_rad'], 'sent_to_rad'],
    [['canceled', 'pending'], 'pending'],
    [['canceled', 'awaiting_records'], 'awaiting_records'],
    [['canceled'], 'canceled'],
    [['awaiting_records', 'pending'], 'pending'],
    [[], null],
  ] as const)('%j -> %s', ([statuses, best]) => {
    expect(mostAdvancedVisit(statuses.map((status) => ({ status })))).toBe(best);
  });

  it('the table, the detail view and the export agree: complete above exam_not_completed, canceled last', async () => {
    const base = fx.mock.referrals.slice(1, 3) as Referral[]; // R-240001, R-240002: each has visits
    const shaped = (r: Referral, statuses: string[]) => ({
      ...r,
      visits: statuses.map((status, i) => ({ ...r.visits[0]!, id: `${r.id.slice(0, 35)}${i}`, status })),
    });
    const referrals = [
      shaped(base[0]!, ['exam_not_completed', 'complete']),
      shaped(base[1]!, ['canceled', 'pending']),
    ];
    const server = await testServer((req, res) =>
      req.url?.includes(`/referrals/${referrals[0]!.id}`)
        ? json(res, 200, referrals[0] as unknown as Record<string, unknown>)
        : json(res, 200, {
            referrals,
            meta: { current_page: 1, next_page: null, total_pages: 1, total_count: 2 },
          }),
    );
    try {
      const env = { ...fx.env(), IMAGING_BASE_URL: server.url };
      const list = await run(['referrals', 'list'], { env });
      expect(list.code, list.stderr).toBe(0);
      const [head, ...rows] = list.stdout.trimEnd().split('\n');
      const col = head!.split(/ {2,}/).indexOf('MOST ADVANCED VISIT');
      expect(rows.map((l) => l.split(/ {2,}/)[col])).toEqual(['complete', 'pending']);
      const get = await run(['referrals', 'get', referrals[0]!.id], { env });
      expect(get.stdout).toMatch(/^Most advanced visit: +complete$/m);
      const csv = await run(['referrals', 'export', '--fields', 'reference,most_advanced_visit'], { env });
      expect(csv.stdout.split('\r\n').slice(0, 3)).toEqual([
        'reference,most_advanced_visit',
        `${referrals[0]!.reference},complete`,
        `${referrals[1]!.reference},pending`,
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('referrals list', () => {
  const fx = mockFixture({ referrals: 250 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    fx.reset();
    dir = tempDir();
  });

  afterEach(() => dir.cleanup());

  const all = (): Referral[] => fx.mock.referrals.slice(0, fx.mock.referrals.total);

  it('shows a table with reference, status, line of business, patient, visits and latest visit status', async () => {
    const r = await run(['referrals', 'list', '--per-page', '5'], { env: fx.env() });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^REFERENCE\s+STATUS\s+LINE OF BUSINESS\s+PATIENT\s+VISITS\s+MOST ADVANCED VISIT\s+ID$/,
    );
    expect(lines).toHaveLength(6);
    expect(r.stdout).toContain('awaiting_records'); // a status the tool does not know, shown as is
    expect(r.stderr).toMatch(/Page 1 of 50 \(250 referrals\)/);
  });

  it('prints every field as sent with --json, unknown fields included', async () => {
    const r = await run(['referrals', 'list', '--json'], { env: fx.env() });
    const data = JSON.parse(r.stdout);
    expect(data[0]).toEqual(JSON.parse(JSON.stringify(all()[0])));
    expect(data[0].partner_metadata).toEqual({ source: 'emulator', batch: 0 });
  });

  it('passes --param through unchanged and pages with --page/--per-page', async () => {
    await run(
      [
        'referrals',
        'list',
        '--param',
        'status=closed',
        '--param',
        'custom[]=a b',
        '--page',
        '2',
        '--per-page',
        '3',
        '--json',
      ],
      {
        env: fx.env(),
      },
    );
    expect(fx.apiRequests()[0]!.path).toBe(
      '/api/v2/referrals?status=closed&custom[]=a%20b&page=2&per_page=3',
    );
  });

  it('fetches every page with --all', async () => {
    const r = await run(['referrals', 'list', '--all', '--format', 'ndjson'], { env: fx.env() });
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(250);
  });

  it('accepts a bare array as the list answer', async () => {
    const { startMockServer } = await import('../../../src/emulator/server.js');
    const bare = await startMockServer({ port: 0, referrals: 130, referralListShape: 'bare' });
    try {
      const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: bare.url, IMAGING_CONFIG_DIR: dir.path };
      const one = await run(['referrals', 'list', '--json'], { env });
      expect(JSON.parse(one.stdout)).toHaveLength(25);
      const every = await run(['referrals', 'list', '--all', '--json'], { env });
      expect(JSON.parse(every.stdout)).toHaveLength(130);
      const exported = await run(['referrals', 'export', '--format', 'ndjson'], { env });
      expect(exported.stdout.trimEnd().split('\n')).toHaveLength(130);
      // The emulator caps per_page at 100: asking 150 gets short pages, and still every referral.
      const capped = await run(['referrals', 'export', '--format', 'ndjson', '--per-page', '150'], { env });
      expect(capped.stdout.trimEnd().split('\n')).toHaveLength(130);
    } finally {
      await bare.close();
    }
  });
});
