import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../../src/api/types.js';
import { paginated } from '../../../src/emulator/server.js';
import { bothForms, expectUsageError, lines, onTerminal, piped, plain } from '../../fake-io.js';
import {
  json,
  mockFixture,
  run,
  testServer as startTestServer,
  tempDir,
  type testServer,
} from '../../helpers.js';

const fx = mockFixture({ referrals: 60 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const HEADER =
  'referral_id,reference,referral_status,line_of_business,payment_type,incident_state,patient_id,patient_first_name,patient_last_name,patient_date_of_birth,law_firm_id,law_firm_name,practice_id,practice_name,payor_id,payor_name,insurance_number,wc_number,referring_provider,provider_name,provider_npi,scheduling_mode,icd10_codes,visit_count,most_advanced_visit,auto_book_status,auto_book_outcome';

describe('imaging referrals export', () => {
  it('writes the same CSV on a terminal and into a pipe; progress only on a terminal', async () => {
    const { terminal, piped: p } = await bothForms(['referrals', 'export', '--per-page', '25'], {
      env: fx.env(),
    });
    expect(terminal.code).toBe(0);
    expect(p.code).toBe(0);
    expect(terminal.stdout).toBe(p.stdout);
    const rows = p.stdout.split('\r\n');
    expect(rows[0]).toBe(HEADER);
    expect(rows).toHaveLength(62); // header, 60 rows, and the empty string after the last CRLF
    expect(rows[2]).toMatch(/^3212c76a-c27e-4ca2-9e90-bb9c865c1630,R-240001,closed,workers_comp,/);
    const summary =
      /^Exported 60 referral rows \(csv\) from 60 referrals read in 3 pages, 3 requests, \d+\.\d s\n$/;
    expect(p.stderr).toMatch(summary);
    expect(terminal.stderr).toContain('\u001b[?25l'); // the cursor is hidden while the bar moves
    expect(plain(terminal.stderr)).toMatch(/Exporting referrals \[#+\] 3\/3 pages {2}60 records/);
    expect(plain(terminal.stderr).split('\r').at(-1)).toMatch(summary);
  });

  it('writes NDJSON and JSON of the whole records', async () => {
    const nd = await piped(['referrals', 'export', '--format', 'ndjson'], { env: fx.env() });
    const records = lines(nd.stdout).map((l) => JSON.parse(l));
    expect(records).toHaveLength(60);
    expect(records[1]).toMatchObject({ reference: 'R-240001', status: 'closed' });
    const json = await piped(['referrals', 'export', '--format', 'json'], { env: fx.env() });
    expect(JSON.parse(json.stdout)).toEqual(records);
  });

  it('writes -o FILE whole and owner-only, leaving no temporary file', async () => {
    const out = join(fx.configDir, 'referrals.csv');
    const r = await onTerminal(['referrals', 'export', '-o', out], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const text = readFileSync(out, 'utf8');
    expect(text.startsWith(`${HEADER}\r\n`)).toBe(true);
    expect(text.split('\r\n')).toHaveLength(62);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(readdirSync(fx.configDir).filter((f) => f !== 'referrals.csv' && f !== 'config.json')).toEqual([]);
  });

  it('one row per visit with --rows visit', async () => {
    const r = await piped(['referrals', 'export', '--rows', 'visit', '--format', 'csv'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^Exported \d+ visit rows \(csv\) from 60 referrals/);
  });

  it('--fields latest_visit_status, the old name of most_advanced_visit, still works, with one note', async () => {
    const r = await piped(
      ['referrals', 'export', '--fields', 'reference,latest_visit_status', '--per-page', '60'],
      {
        env: fx.env(),
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\r\n')[0]).toBe('reference,most_advanced_visit');
    expect(r.stdout).toMatch(/\r\nR-240001,contacted_for_booking\r\n/);
    expect(r.stderr.split('\n').filter((l) => l.includes('latest_visit_status'))).toEqual([
      'Note: --fields latest_visit_status is now most_advanced_visit; the old name will stop being accepted in a later release',
    ]);
    // Where the new name is no column either, the old one is unknown as before.
    const v = await piped(['referrals', 'export', '--rows', 'visit', '--fields', 'latest_visit_status'], {
      env: fx.env(),
    });
    expect(v.code).toBe(2);
    expect(v.stderr).toMatch(/unknown field "latest_visit_status"/);
  });

  it('procedure rows carry report and image links without a signed query string', async () => {
    const sent = JSON.stringify(
      (await run(['referrals', 'list', '--per-page', '60', '--json'], { env: fx.env() })).stdout,
    );
    expect(sent).toContain('signature='); // the emulator signs its storage links
    const r = await piped(['referrals', 'export', '--rows', 'procedure'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('/reports/ACC-');
    expect(r.stdout).not.toMatch(/[?&](signature|expires)=/);
  });

  it('refuses bad options before any request, and writes no file', async () => {
    const seen = () => fx.apiRequests().length;
    expectUsageError(
      await piped(['referrals', 'export', '--rows', 'patient'], { env: fx.env() }),
      /--rows: unknown row kind "patient"|patient/,
      seen(),
    );
    expectUsageError(
      await piped(['referrals', 'export', '--output', ''], { env: fx.env() }),
      /--output needs a name, and it is empty/,
      seen(),
    );
    expectUsageError(
      await piped(['referrals', 'export', '--concurrency', '17'], { env: fx.env() }),
      /--concurrency/,
      seen(),
    );
    const out = join(fx.configDir, 'never.csv');
    expectUsageError(
      await piped(['referrals', 'export', '-o', out, '--format', 'xml'], { env: fx.env() }),
      /xml/,
      seen(),
    );
    expect(existsSync(out)).toBe(false);
  });
});

describe('referrals export: --visit-status and the format -o implies', () => {
  const fx = mockFixture({ referrals: 300 });

  let dir: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    await fx.start();
  });

  afterAll(async () => {
    await fx.stop();
  });

  beforeEach(() => {
    dir = tempDir();
    fx.reset();
  });

  afterEach(() => dir.cleanup());

  const exportTo = (name: string, ...extra: string[]) =>
    run(['referrals', 'export', '-o', join(dir.path, name), ...extra], { env: fx.env() });

  describe('--visit-status', () => {
    it('a typo is exit 2 before any request, naming the nearest status; the old file stays', async () => {
      const target = join(dir.path, 'x.csv');
      writeFileSync(target, 'yesterday\n');
      const r = await exportTo('x.csv', '--visit-status', 'boked');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('unknown visit status "boked"; did you mean "booked"?');
      expect(r.stderr).toContain('prefix it with +');
      expect(fx.apiRequests()).toHaveLength(0);
      expect(readFileSync(target, 'utf8')).toBe('yesterday\n');
    });

    it('matches any case and - for _: BOOKED and Ready-To-Book find the rows booked,ready_to_book finds', async () => {
      const lower = await exportTo('a.csv', '--visit-status', 'booked,ready_to_book', '--rows', 'visit');
      const upper = await exportTo('b.csv', '--visit-status', 'BOOKED, Ready-To-Book', '--rows', 'visit');
      expect(lower.code).toBe(0);
      expect(upper.code).toBe(0);
      const a = readFileSync(join(dir.path, 'a.csv'), 'utf8');
      expect(a.split('\r\n').length).toBeGreaterThan(3);
      expect(readFileSync(join(dir.path, 'b.csv'), 'utf8')).toBe(a);
    });

    it('a status newer than the tool passes with +, and an export that wrote no row warns', async () => {
      const r = await exportTo('x.csv', '--visit-status', '+awaiting_review');
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/^Exported 0 referral rows \(csv\) from 300 referrals read in 3 pages/);
      expect(r.stderr).toContain(
        'warning: 300 referrals were read but no row was written (no visit has status awaiting_review): the file holds only the header.',
      );
      expect(readFileSync(join(dir.path, 'x.csv'), 'utf8').split('\r\n')).toHaveLength(2);
    });

    it('the summary counts the rows written, not the referrals read', async () => {
      const r = await exportTo('x.csv', '--visit-status', 'booked');
      const written = readFileSync(join(dir.path, 'x.csv'), 'utf8').split('\r\n').length - 2;
      expect(written).toBeGreaterThan(0);
      expect(written).toBeLessThan(300);
      expect(r.stderr).toMatch(
        new RegExp(`^Exported ${written} referral rows \\(csv\\) from 300 referrals read`),
      );
      expect(r.stderr).not.toContain('Warning');
    });
  });

  describe('the format follows -o', () => {
    it.for([
      ['x.json', (t: string) => expect(JSON.parse(t)).toHaveLength(300)],
      [
        'x.ndjson',
        (t: string) =>
          expect(
            t
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l)),
          ).toHaveLength(300),
      ],
      [
        'x.jsonl',
        (t: string) =>
          expect(
            t
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l)),
          ).toHaveLength(300),
      ],
      ['x.CSV', (t: string) => expect(t.startsWith('referral_id,')).toBe(true)],
      ['x.txt', (t: string) => expect(t.startsWith('referral_id,')).toBe(true)],
    ] as const)('-o %s', async ([name, check]) => {
      const r = await exportTo(name);
      expect(r.code).toBe(0);
      expect(r.stderr).not.toContain('Warning');
      check(readFileSync(join(dir.path, name), 'utf8'));
    });

    it('--format that disagrees with the extension wins, with a warning', async () => {
      const r = await exportTo('x.csv', '--format', 'ndjson');
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('warning: writing NDJSON (--format ndjson) into');
      expect(r.stderr).toContain('whose extension says CSV');
      expect(JSON.parse(readFileSync(join(dir.path, 'x.csv'), 'utf8').split('\n')[0]!).id).toBeTruthy();
      const agree = await exportTo('y.json', '--json');
      expect(agree.stderr).not.toContain('Warning');
    });
  });
});

describe('referrals export: rows, columns and a server failure', () => {
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

  const csv = (text: string) => parse(text, { columns: true, bom: false }) as Array<Record<string, string>>;

  // One `--rows visit` export and its parsed rows, read by each test that checks visit rows: the
  // emulator's referrals are only read, so every such run writes the same bytes.
  let visitRun: Promise<{ stdout: string; rows: Array<Record<string, string>> }> | undefined;
  const visitExport = () =>
    (visitRun ??= run(['referrals', 'export', '--rows', 'visit'], { env: fx.env() }).then((r) => {
      expect(r.code).toBe(0);
      return { stdout: r.stdout, rows: csv(r.stdout) };
    }));

  /** The documented export columns (README "Export columns"): a change here is a breaking change. */
  const REFERRAL_COLUMNS = [
    'referral_id',
    'reference',
    'referral_status',
    'line_of_business',
    'payment_type',
    'incident_state',
    'patient_id',
    'patient_first_name',
    'patient_last_name',
    'patient_date_of_birth',
    'law_firm_id',
    'law_firm_name',
    'practice_id',
    'practice_name',
    'payor_id',
    'payor_name',
    'insurance_number',
    'wc_number',
    'referring_provider',
    'provider_name',
    'provider_npi',
    'scheduling_mode',
    'icd10_codes',
    'visit_count',
    'most_advanced_visit',
    'auto_book_status',
    'auto_book_outcome',
  ];

  const CONTEXT = [
    'referral_id',
    'reference',
    'referral_status',
    'line_of_business',
    'patient_first_name',
    'patient_last_name',
    'patient_date_of_birth',
    'law_firm_name',
    'payor_name',
  ];

  const VISIT_COLUMNS = [
    ...CONTEXT,
    'visit_id',
    'modality',
    'visit_status',
    'start_time',
    'location_id',
    'location_name',
    'location_address_line_1',
    'location_address_line_2',
    'location_city',
    'location_state',
    'location_zip_code',
    'location_npi',
    'radiologist_group_name',
    'procedure_count',
    'cpt_codes',
    'accession_ids',
  ];

  const PROCEDURE_COLUMNS = [
    ...CONTEXT,
    'visit_id',
    'modality',
    'visit_status',
    'start_time',
    'location_name',
    'location_city',
    'location_state',
    'procedure_index',
    'body_part',
    'procedure',
    'contrast',
    'laterality',
    'cpt_code',
    'cpt_code_id',
    'cpt_system',
    'accession_id',
    'study_uid',
    'series_uid',
    'report_link',
    'image_link',
  ];

  describe('referrals export', () => {
    it('writes every referral as CSV with the documented columns, in API order', async () => {
      const r = await run(['referrals', 'export'], { env: fx.env() });
      expect(r.code).toBe(0);
      expect(r.stdout.split('\r\n')[0]).toBe(REFERRAL_COLUMNS.join(','));
      const rows = csv(r.stdout);
      expect(rows.map((x) => x.referral_id)).toEqual(all().map((x) => x.id));
      expect(r.stderr).toMatch(
        /^Exported 250 referral rows \(csv\) from 250 referrals read in 3 pages, 3 requests, [\d.]+ s\n$/,
      );
    });

    it('has the documented visit and procedure columns and one row per visit / procedure', async () => {
      const visits = await visitExport();
      expect(visits.stdout.split('\r\n')[0]).toBe(VISIT_COLUMNS.join(','));
      const expectedVisits = all().reduce((n, r) => n + Math.max(1, r.visits.length), 0);
      expect(visits.rows).toHaveLength(expectedVisits);
      const procs = await run(['referrals', 'export', '--rows', 'procedure'], { env: fx.env() });
      expect(procs.stdout.split('\r\n')[0]).toBe(PROCEDURE_COLUMNS.join(','));
      const expectedProcs = all().reduce(
        (n, r) =>
          n +
          (r.visits.length === 0 ? 1 : r.visits.reduce((m, v) => m + Math.max(1, v.procedures.length), 0)),
        0,
      );
      const rows = csv(procs.stdout);
      expect(rows).toHaveLength(expectedProcs);
      const withCpt = rows.find((x) => x.cpt_code !== '')!;
      expect(withCpt.procedure_index).toBe('1');
    });

    it('keeps awkward text intact and guards formulas, unless --no-formula-guard', async () => {
      const { rows } = await visitExport();
      const hyper = rows.find((x) => String(x.patient_last_name).includes('Hyperlink'))!;
      expect(hyper.patient_last_name).toBe("'=Hyperlink");
      expect(rows.some((x) => x.law_firm_name === 'Smith, Jones & "Partners" LLP')).toBe(true);
      expect(rows.some((x) => x.location_address_line_2 === 'Suite 2, "Building B"')).toBe(true);
      expect(rows.some((x) => x.patient_first_name === 'Nguyễn Thị')).toBe(true);
      const raw = csv((await run(['referrals', 'export', '--no-formula-guard'], { env: fx.env() })).stdout);
      expect(raw.some((x) => x.patient_last_name === '=Hyperlink')).toBe(true);
    });

    it('exports NDJSON and JSON with the records as sent', async () => {
      const nd = await run(['referrals', 'export', '--format', 'ndjson'], { env: fx.env() });
      const lines = nd.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines).toEqual(JSON.parse(JSON.stringify(all())));
      const js = await run(['referrals', 'export', '--json'], { env: fx.env() });
      expect(JSON.parse(js.stdout)).toEqual(lines);
      const flat = await run(['referrals', 'export', '--format', 'ndjson', '--rows', 'procedure'], {
        env: fx.env(),
      });
      expect(Object.keys(JSON.parse(flat.stdout.split('\n')[0]!))).toEqual(PROCEDURE_COLUMNS);
    });

    it('writes --output to a 0600 file via a temporary name, leaving nothing else behind', async () => {
      const target = join(dir.path, 'referrals.csv');
      writeFileSync(target, 'old contents', { mode: 0o644 });
      const r = await run(['referrals', 'export', '-o', target, '--concurrency', '3', '--per-page', '20'], {
        env: fx.env(),
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
      expect(statSync(target).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir.path)).toEqual(['referrals.csv']);
      expect(csv(readFileSync(target, 'utf8')).map((x) => x.referral_id)).toEqual(all().map((x) => x.id));
      expect(r.stderr).toContain(`from 250 referrals read in 13 pages, 13 requests`);
      expect(r.stderr).toContain(`-> ${target}`);
      // No progress bar where standard error is not a terminal.
      expect(r.stderr).not.toContain('\u001b');
    });

    it('keeps only visits with --visit-status, and referrals that have one', async () => {
      const r = await run(
        ['referrals', 'export', '--rows', 'visit', '--visit-status', 'booked,report_uploaded'],
        { env: fx.env() },
      );
      const rows = csv(r.stdout);
      const expected = all().reduce(
        (n, x) => n + x.visits.filter((v) => ['booked', 'report_uploaded'].includes(v.status)).length,
        0,
      );
      expect(rows).toHaveLength(expected);
      expect(new Set(rows.map((x) => x.visit_status))).toEqual(new Set(['booked', 'report_uploaded']));
    });

    it('shows a progress bar on a terminal and leaves the terminal clean', async () => {
      const r = await run(['referrals', 'export', '-o', join(dir.path, 'x.csv'), '--per-page', '10'], {
        env: fx.env(),
        stderrIsTTY: true,
      });
      expect(r.stderr).toContain('\u001b[?25l'); // cursor hidden while drawing
      expect(r.stderr).toMatch(/Exporting referrals \[[#-]{20}\] \d+\/25 pages/);
      expect(r.stderr).toContain('\u001b[?25h'); // and shown again
      // The same export with standard error not a terminal draws nothing: see the --output test above.
    });

    it.each([
      [['--rows', 'patient'], /unknown row kind "patient"/],
      [['--format', 'table'], /--format table is not available here/],
      [['--concurrency', '0'], /--concurrency must be between 1 and 16/],
      [['--param', 'novalue'], /expected KEY=VALUE/],
      [['-o', '/nonexistent-dir/out.csv'], /cannot write \/nonexistent-dir\/out.csv: no such folder/],
    ])('%j is a usage error before any request', async (args, message) => {
      const r = await run(['referrals', 'export', ...args], { env: fx.env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(fx.apiRequests()).toHaveLength(0);
    });
  });

  describe('an export interrupted by a server failure', () => {
    let srv: Awaited<ReturnType<typeof testServer>> | undefined;
    afterEach(() => srv?.close());

    /** Serves the emulator's referrals, but page `failPage` answers `status` every time. */
    const failing = async (failPage: number, status: number, body: unknown) => {
      srv = await startTestServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        if (Number(url.searchParams.get('page')) === failPage)
          return json(res, status, body, { 'x-request-id': 'req_fail' });
        json(res, 200, paginated('referrals', all(), url));
      });
      return { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: dir.path };
    };

    it('fails with the error (exit 1) after retries, and leaves no file at the target', async () => {
      const env = await failing(3, 500, { message: 'Internal server error', code: 'internal_error' });
      const target = join(dir.path, 'out.csv');
      const r = await run(['referrals', 'export', '-o', target, '--per-page', '20'], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Export stopped after \d+ referrals: no file was written at/);
      expect(r.stderr).toContain('request id: req_fail');
      expect(readdirSync(dir.path)).toEqual([]);
      expect(srv!.seen.filter((q) => q.url.includes('page=3&')).length).toBe(3);
    });

    it('a token that expires mid-export is exit 3, and nothing is left behind', async () => {
      const env = await failing(5, 401, {
        message: 'Sandbox API token has expired',
        code: 'api_token_expired',
      });
      const r = await run(
        ['referrals', 'export', '-o', join(dir.path, 'out.ndjson'), '--format', 'ndjson', '--per-page', '10'],
        { env },
      );
      expect(r.code).toBe(3);
      expect(readdirSync(dir.path)).toEqual([]);
    });

    it('to stdout, says the output is incomplete', async () => {
      const env = await failing(2, 429, { message: 'limit', code: 'sandbox_request_limit_reached' });
      const r = await run(['referrals', 'export', '--per-page', '50'], { env });
      expect(r.code).toBe(6);
      expect(r.stderr).toContain('the output sent to standard output is incomplete');
    });
  });
});
