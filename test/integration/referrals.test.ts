import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Referral } from '../../src/api/types.js';
import { paginated } from '../../src/emulator/server.js';
import {
  json,
  mockFixture,
  run,
  testServer as startTestServer,
  tempDir,
  type testServer,
} from '../helpers.js';

const fx = mockFixture({ referrals: 250 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

const all = (): Referral[] => fx.mock.referrals.slice(0, fx.mock.referrals.total);
const csv = (text: string) => parse(text, { columns: true, bom: false }) as Array<Record<string, string>>;

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
  'latest_visit_status',
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

describe('referrals list', () => {
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
    const { startMockServer } = await import('../../src/emulator/server.js');
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

describe('referrals get', () => {
  const withVisits = () => all().find((r) => r.visits.some((v) => v.start_time) && r.call_notes.length > 0)!;

  it('shows header, patient, visits with procedures in local time, ICD-10 codes and call notes', async () => {
    const ref = withVisits();
    const r = await run(['referrals', 'get', ref.id], { env: fx.env({ TZ: 'America/Los_Angeles' }) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Referral ${ref.reference}`);
    expect(r.stdout).toContain(`Name:           ${ref.patient.first_name}`);
    const scheduled = ref.visits.find((v) => v.start_time)!;
    // The one time format for people, in TZ's zone: 2026-01-07 09:00 PST.
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', {
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
        timeZoneName: 'short',
        timeZone: 'America/Los_Angeles',
      })
        .formatToParts(new Date(scheduled.start_time!))
        .map((p) => [p.type, p.value]),
    );
    const local = `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${parts.timeZoneName}`;
    expect(r.stdout).toContain(`Start:         ${local}`);
    expect(local).toMatch(/P[SD]T$/);
    expect(r.stdout).toContain(`Visits (${ref.visits.length})`);
    expect(r.stdout).toContain(`ICD-10 codes (${ref.icd10_codes.length})`);
    expect(r.stdout).toContain(`Call notes (${ref.call_notes.length})`);
  });

  it('shows a visit status it does not know as it is', async () => {
    const ref = all().find((r) => r.visits.some((v) => v.status === 'awaiting_records'))!;
    const r = await run(['referrals', 'get', ref.id], { env: fx.env() });
    expect(r.stdout).toMatch(/\d\. \S+\s+awaiting_records/);
  });

  it('prints the referral exactly as the API sent it with --json', async () => {
    const ref = all()[3]!;
    const r = await run(['referrals', 'get', ref.id, '--json'], { env: fx.env() });
    expect(r.stdout).toBe(`${JSON.stringify(ref)}\n`);
  });

  it('rejects a non-UUID before any request, and an unknown id is exit 4 with the request id', async () => {
    const bad = await run(['referrals', 'get', 'R-240001'], { env: fx.env() });
    expect(bad.code).toBe(2);
    expect(fx.apiRequests()).toHaveLength(0);
    const missing = await run(['referrals', 'get', '00000000-0000-4000-8000-000000000000'], {
      env: fx.env(),
    });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/request id: req_[0-9a-f]{16}/);
  });
});

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
    const visits = await run(['referrals', 'export', '--rows', 'visit'], { env: fx.env() });
    expect(visits.stdout.split('\r\n')[0]).toBe(VISIT_COLUMNS.join(','));
    const expectedVisits = all().reduce((n, r) => n + Math.max(1, r.visits.length), 0);
    expect(csv(visits.stdout)).toHaveLength(expectedVisits);
    const procs = await run(['referrals', 'export', '--rows', 'procedure'], { env: fx.env() });
    expect(procs.stdout.split('\r\n')[0]).toBe(PROCEDURE_COLUMNS.join(','));
    const expectedProcs = all().reduce(
      (n, r) =>
        n + (r.visits.length === 0 ? 1 : r.visits.reduce((m, v) => m + Math.max(1, v.procedures.length), 0)),
      0,
    );
    const rows = csv(procs.stdout);
    expect(rows).toHaveLength(expectedProcs);
    const withCpt = rows.find((x) => x.cpt_code !== '')!;
    expect(withCpt.procedure_index).toBe('1');
  });

  it('keeps awkward text intact and guards formulas, unless --no-formula-guard', async () => {
    const r = await run(['referrals', 'export', '--rows', 'visit'], { env: fx.env() });
    const rows = csv(r.stdout);
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
    const quiet = await run(['referrals', 'export', '-o', join(dir.path, 'y.csv')], { env: fx.env() });
    expect(quiet.stderr).not.toContain('\u001b');
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

describe('referrals create', () => {
  const payload = {
    line_of_business: 'personal_injury',
    patient: { first_name: 'Ada', last_name: "O'Neil, Jr." },
    note: 'x',
  };

  it('creates from a file, sending the bytes unchanged', async () => {
    const file = join(dir.path, 'ref.json');
    const text = `{\n  "line_of_business": "personal_injury",\n  "patient": {"first_name": "Ada", "last_name": "Lovelace"}\n}\n`;
    writeFileSync(file, text);
    const seen: string[] = [];
    const proxy = await startTestServer((_req, res, body) => {
      seen.push(body.toString('utf8'));
      json(res, 201, {
        id: '11111111-1111-4111-8111-111111111111',
        reference: 'R-1',
        patient: { first_name: 'Ada' },
        visits: [],
      });
    });
    try {
      const r = await run(['referrals', 'create', '--file', file], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: proxy.url, IMAGING_CONFIG_DIR: dir.path },
      });
      expect(r.code).toBe(0);
      expect(seen).toEqual([text]);
      expect(r.stderr).toContain('Created referral R-1 11111111-1111-4111-8111-111111111111');
    } finally {
      await proxy.close();
    }
  });

  it('creates from stdin against the emulator', async () => {
    const r = await run(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: JSON.stringify(payload),
    });
    expect(r.code).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created.patient.last_name).toBe("O'Neil, Jr.");
    const got = await run(['referrals', 'get', created.id, '--json'], { env: fx.env() });
    expect(JSON.parse(got.stdout).reference).toBe(created.reference);
  });

  it('rejects invalid JSON before sending anything (exit 2)', async () => {
    const r = await run(['referrals', 'create', '--file', '-'], { env: fx.env(), stdin: '{"patient": {' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('standard input is not valid JSON');
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('lists the 422 errors with exit 7', async () => {
    const r = await run(['referrals', 'create', '--file', '-'], {
      env: fx.env(),
      stdin: JSON.stringify({ line_of_business: 'patient_direct', patient: {} }),
    });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("- Patient first name can't be blank");
    expect(r.stderr).toContain('- Line of business patient_direct cannot be selected on referral creation');
  });

  it('in production, needs --yes when there is no terminal, and asks on a terminal', async () => {
    const env = {
      IMAGING_ENV: 'production',
      IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
      IMAGING_TOKEN: 'mock-prod',
      IMAGING_CONFIG_DIR: dir.path,
    };
    const file = join(dir.path, 'p.json');
    writeFileSync(file, JSON.stringify(payload));
    const refused = await run(['referrals', 'create', '--file', file], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect(fx.apiRequests()).toHaveLength(0);
    const declined = await run(['referrals', 'create', '--file', file], {
      env,
      stdinIsTTY: true,
      deps: { prompter: { secret: async () => '', confirm: async () => false } },
    });
    expect(declined.code).toBe(1);
    expect(declined.stderr).toContain('Nothing was sent.');
    expect(fx.apiRequests()).toHaveLength(0);
    const yes = await run(['referrals', 'create', '--file', file, '--yes'], { env });
    expect(yes.code).toBe(0);
    expect(fx.apiRequests()).toHaveLength(1);
  });
});
