import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/registry.js';
import { EXPORT_COLUMNS, REFERRAL_LIST_FIELDS } from '../../src/resources/referrals.js';
import { json, mockFixture, run, spawnCli, tempDir, testServer } from '../helpers.js';

/**
 * `--fields` / `--json a,b,c` in every format, `--bom`,
 * `--no-formula-guard` on every CSV output, stable list CSV columns; against the emulator (and,
 * for columns that move between pages, a server started here that sends pages of other shapes).
 */

const fx = mockFixture({ referrals: 12 });
let dir: ReturnType<typeof tempDir>;
let referralId = '';
beforeAll(async () => {
  await fx.start();
  dir = tempDir();
  const r = await run(['referrals', 'list', '--per-page', '1', '--json', 'id'], { env: fx.env() });
  referralId = JSON.parse(r.stdout)[0].id;
});
afterAll(async () => {
  dir.cleanup();
  await fx.stop();
});
beforeEach(() => fx.reset());

const csvRows = (text: string): string[][] => parse(text, { bom: true, relax_column_count: true });

describe('--fields picks and orders fields in every format', () => {
  it('table: exactly those columns, in that order', async () => {
    const r = await run(['cpt', '73721', '--fields', 'body_part_name,code,id'], { env: fx.env() });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^BODY_PART_NAME\s+CODE\s+ID$/);
    expect(lines[1]).toMatch(/^Hip\s+73721\s+[0-9a-f-]{36}$/);
  });

  it('csv: header and cells in that order', async () => {
    const r = await run(['cpt', '73721', '--format', 'csv', '--fields', 'laterality,code'], {
      env: fx.env(),
    });
    expect(r.code).toBe(0);
    const rows = csvRows(r.stdout);
    expect(rows[0]).toEqual(['laterality', 'code']);
    expect(rows.slice(1).every((row) => row.length === 2 && row[1] === '73721')).toBe(true);
  });

  it('json and ndjson: those keys in that order, dotted paths keyed as typed, a missing one null', async () => {
    const j = await run(
      ['referrals', 'list', '--per-page', '3', '--json', 'reference,patient.last_name,payor.name'],
      {
        env: fx.env(),
      },
    );
    expect(j.code).toBe(0);
    const records = JSON.parse(j.stdout) as Array<Record<string, unknown>>;
    expect(records).toHaveLength(3);
    for (const rec of records)
      expect(Object.keys(rec)).toEqual(['reference', 'patient.last_name', 'payor.name']);
    expect(records.map((x) => x['patient.last_name'])).toContain('Hernández');
    expect(records.some((x) => x['payor.name'] === null)).toBe(true);
    const n = await run(
      ['referrals', 'list', '--per-page', '3', '--format', 'ndjson', '--fields', 'law_firm.name,id'],
      { env: fx.env() },
    );
    const lines = n.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(Object.keys(JSON.parse(lines[0]!))).toEqual(['law_firm.name', 'id']);
  });

  it('an object is a field whole; --all streams the chosen fields', async () => {
    const r = await run(['referrals', 'list', '--all', '--per-page', '5', '--json', 'id,law_firm'], {
      env: fx.env(),
    });
    expect(r.code).toBe(0);
    const records = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(records).toHaveLength(12);
    expect(Object.keys(records[0]!)).toEqual(['id', 'law_firm']);
    expect(records[0]!.law_firm).toMatchObject({ name: expect.any(String) });
  });

  it('one-record commands: referrals get (json, table), law-firms create (csv)', async () => {
    const j = await run(['referrals', 'get', referralId, '--json', 'reference,patient.first_name'], {
      env: fx.env(),
    });
    expect(j.code).toBe(0);
    expect(Object.keys(JSON.parse(j.stdout))).toEqual(['reference', 'patient.first_name']);
    const t = await run(['referrals', 'get', referralId, '--fields', 'status,reference'], { env: fx.env() });
    expect(t.stdout).toMatch(/^status:\s+\S+\nreference:\s+R-\d+\n$/);
    const c = await run(
      [
        'law-firms',
        'create',
        '--name',
        'Fields & Co',
        '--city',
        'Boston',
        '--state',
        'MA',
        '--format',
        'csv',
      ],
      { env: fx.env(), deps: {} },
    );
    expect(c.code).toBe(0);
    expect(csvRows(c.stdout)[0]!.slice(0, 7)).toEqual([
      'id',
      'name',
      'address_line_1',
      'address_line_2',
      'city',
      'state',
      'zipcode',
    ]);
    const f = await run(
      [
        'law-firms',
        'create',
        '--name',
        'Fields & Co 2',
        '--city',
        'Boston',
        '--state',
        'MA',
        '--json',
        'name,state',
      ],
      { env: fx.env() },
    );
    expect(JSON.parse(f.stdout)).toEqual({ name: 'Fields & Co 2', state: 'MA' });
  });

  it('a field the API sends that is not documented: refused plain, taken with a leading +', async () => {
    const bad = await run(['referrals', 'list', '--json', 'reference,partner_metadata.source'], {
      env: fx.env(),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown field "partner_metadata.source"');
    expect(bad.stderr).toContain('prefix it with +');
    const ok = await run(
      ['referrals', 'list', '--per-page', '2', '--json', 'reference,+partner_metadata.source'],
      {
        env: fx.env(),
      },
    );
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)[0]).toEqual({
      reference: expect.any(String),
      'partner_metadata.source': 'emulator',
    });
  });
});

/** Every command whose definition has fields: how to call it here. */
const CALLS: Record<string, () => string[]> = {
  modalities: () => ['modalities'],
  'body-parts': () => ['body-parts'],
  cpt: () => ['cpt', '73721'],
  icd10: () => ['icd10', 'knee'],
  'law-firms search': () => ['law-firms', 'search', 'partners'],
  'law-firms create': () => ['law-firms', 'create', '--name', 'N', '--city', 'C', '--state', 'NY'],
  'referrals list': () => ['referrals', 'list'],
  'referrals find': () => ['referrals', 'find', 'R-240001'],
  'referrals get': () => ['referrals', 'get', referralId],
  'referrals documents': () => ['referrals', 'documents', referralId],
  'referrals download': () => ['referrals', 'download', referralId, '-D', dir.path],
  'referrals create': () => {
    const file = join(dir.path, 'new.json');
    writeFileSync(file, '{"patient":{"first_name":"A","last_name":"B"}}');
    return ['referrals', 'create', '--file', file];
  },
  'referrals export': () => ['referrals', 'export'],
  'referrals payments': () => ['referrals', 'payments', referralId],
  'referrals notifications': () => ['referrals', 'notifications', referralId],
};

describe('an unknown field is exit 2 before any request, listing the fields; help lists them', async () => {
  const withFields: string[] = [];
  for (const entry of COMMANDS)
    if ((await entry.load()).default.fields) withFields.push(entry.path.join(' '));

  it('every command with fields has a row here', () => {
    expect(withFields.sort()).toEqual(Object.keys(CALLS).sort());
  });

  it.for(Object.keys(CALLS))('%s', async (name) => {
    const r = await run([...CALLS[name]!(), '--fields', 'nope'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --fields: unknown field "nope"/);
    expect(r.stderr).toMatch(/hint: Fields: \w+/);
    expect(fx.apiRequests()).toEqual([]);
    const help = await run([...name.split(' '), '--help'], { env: fx.env() });
    expect(help.stdout).toContain('Fields (--fields a,b,c or --json a,b,c');
    const block = help.stdout.slice(help.stdout.indexOf('Fields (')).trimEnd().split('\n');
    for (const line of block) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('suggests the nearest field, and export names the row kind', async () => {
    const r = await run(['referrals', 'export', '--fields', 'reference,patient.last_name'], {
      env: fx.env(),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'unknown field "patient.last_name" (--rows referral, csv); did you mean patient_last_name?',
    );
  });

  it('a command without fields refuses --fields; --fields twice is refused', async () => {
    const a = await run(['auth', 'status', '--fields', 'env'], { env: fx.env() });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--fields is not available for imaging auth status');
    const b = await run(['referrals', 'list', '--json', 'id', '--fields', 'reference'], { env: fx.env() });
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('give the fields once');
    expect(fx.apiRequests()).toEqual([]);
  });
});

describe('--json with and without a field list', () => {
  it('bare --json prints every field the API sent', async () => {
    const r = await run(['referrals', 'list', '--per-page', '1', '--json'], { env: fx.env() });
    expect(Object.keys(JSON.parse(r.stdout)[0])).toContain('partner_metadata');
  });

  it('the word after --json stays the argument when it is not a field list (cpt --json 73721, referrals get --json ID)', async () => {
    const cpt = await run(['cpt', '--json', '73721'], { env: fx.env() });
    expect(cpt.code).toBe(0);
    expect(JSON.parse(cpt.stdout)[0]).toMatchObject({ code: '73721', modality_name: 'MRI' });
    const get = await run(['referrals', 'get', '--json', referralId], { env: fx.env() });
    expect(get.code).toBe(0);
    expect(JSON.parse(get.stdout).id).toBe(referralId);
    const q = await run(['icd10', '--json', 'knee', '--per-page', '2'], { env: fx.env() });
    expect(q.code).toBe(0);
    expect(Object.keys(JSON.parse(q.stdout)[0])).toEqual(['id', 'code', 'short_description']);
  });

  it('a field list after --json: with a comma, a field name, --json=…, or before the command', async () => {
    const a = await run(['cpt', '73721', '--json', 'code,laterality'], { env: fx.env() });
    expect(Object.keys(JSON.parse(a.stdout)[0])).toEqual(['code', 'laterality']);
    const b = await run(['icd10', '--json', 'code', '--per-page', '2'], { env: fx.env() });
    expect(JSON.parse(b.stdout)).toEqual([{ code: expect.any(String) }, { code: expect.any(String) }]);
    const c = await run(['referrals', 'get', referralId, '--json=reference'], { env: fx.env() });
    expect(Object.keys(JSON.parse(c.stdout))).toEqual(['reference']);
    const d = await run(['--json', 'name', 'modalities'], { env: fx.env() });
    expect(d.code).toBe(0);
    expect(Object.keys(JSON.parse(d.stdout)[0])).toEqual(['name']);
    const e = await run(['referrals', 'list', '--json', 'nope'], { env: fx.env() });
    expect(e.code).toBe(2);
    expect(e.stderr).toContain('unknown field "nope"');
  });

  it('the real binary: --json before the command, and cpt --json 73721', async () => {
    const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: fx.mock.url, IMAGING_CONFIG_DIR: dir.path };
    const a = await spawnCli(['--json', 'slug,name', 'modalities'], { env });
    expect(a.exitCode, a.stderr).toBe(0);
    expect(Object.keys(JSON.parse(a.stdout)[0])).toEqual(['slug', 'name']);
    const b = await spawnCli(['cpt', '--json', '73721'], { env });
    expect(b.exitCode, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout).length).toBeGreaterThan(1);
  });
});

describe('--json and the words around it (a verb, a command without fields, another --format)', () => {
  it('before the command, a group verb is a field: --json status|list|path|get referrals list', async () => {
    const status = await run(['--json', 'status', 'referrals', 'list', '--per-page', '1'], { env: fx.env() });
    expect([status.code, status.stderr]).toEqual([0, '']);
    expect(JSON.parse(status.stdout)).toEqual([{ status: expect.any(String) }]);
    // Not fields of referrals list: the unknown-field error, not "unknown command … verb of a group".
    for (const verb of ['list', 'path', 'get']) {
      const r = await run(['--json', verb, 'referrals', 'list', '--per-page', '1'], { env: fx.env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`unknown field "${verb}"`);
      expect(r.stderr).not.toContain('verb of a group');
    }
    // With no command after it, the verb is still the verb without its group.
    const alone = await run(['--json', 'notifications'], { env: fx.env() });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('Did you mean imaging referrals notifications?');
  });

  it('a command without fields: --json WORD is refused as fields, not "too many arguments"', async () => {
    const a = await run(['auth', 'status', '--json', 'a'], { env: fx.env() });
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--fields is not available for imaging auth status');
    expect(a.stderr).not.toContain('too many arguments');
    const srv = await testServer((_req, res) => res.end('ok'));
    try {
      const s = await run(
        ['webhook', 'send', 'visit.status_changed', '--json', 'status,ms', '--to', srv.url, '--unsigned'],
        { env: fx.env() },
      );
      expect(s.code).toBe(2);
      expect(s.stderr).toContain('--fields is not available for imaging webhook send');
      expect(srv.seen).toEqual([]); // refused before anything is sent
    } finally {
      await srv.close();
    }
    // A path whose query holds a comma stays the api command's argument.
    const p = await run(['api', '--json', '/referrals?per_page=1&x=a,b'], { env: fx.env() });
    expect(p.code, p.stderr).toBe(0);
    expect(JSON.parse(p.stdout).referrals).toHaveLength(1);
  });

  it('--json with another --format is exit 2 in either order, before any request', async () => {
    for (const args of [
      ['--format', 'csv', '--json', 'name', 'modalities'],
      ['modalities', '--json', 'name', '--format', 'csv'],
      ['modalities', '--json', '--format', 'csv'],
      ['--json', 'referrals', 'list', '--format', 'ndjson'],
      ['referrals', 'export', '--format', 'csv', '--json', 'reference'],
    ]) {
      fx.reset();
      const r = await run(args, { env: fx.env() });
      expect([r.code, r.stdout], args.join(' ')).toEqual([2, '']);
      expect(r.stderr).toMatch(/--json and --format (csv|ndjson) ask for two formats/);
      expect(fx.apiRequests()).toEqual([]);
    }
    const same = await run(['modalities', '--json', 'name', '--format', 'JSON'], { env: fx.env() });
    expect(same.code, same.stderr).toBe(0);
    expect(Object.keys(JSON.parse(same.stdout)[0])).toEqual(['name']);
  });
});

describe('referrals export --fields, visit rows as JSON', () => {
  it('flat rows: the chosen columns, csv and json', async () => {
    const c = await run(
      ['referrals', 'export', '--rows', 'visit', '--fields', 'reference,visit_status,cpt_codes'],
      {
        env: fx.env(),
      },
    );
    expect(c.code).toBe(0);
    const rows = csvRows(c.stdout);
    expect(rows[0]).toEqual(['reference', 'visit_status', 'cpt_codes']);
    expect(rows.some((row) => /^\d{5}; \d{5}$/.test(row[2]!))).toBe(true);
    const n = await run(
      ['referrals', 'export', '--rows', 'procedure', '--format', 'ndjson', '--fields', 'cpt_code,reference'],
      { env: fx.env() },
    );
    expect(Object.keys(JSON.parse(n.stdout.split('\n')[0]!))).toEqual(['cpt_code', 'reference']);
  });

  it('JSON referrals (as sent): the referral fields, dotted and +', async () => {
    const r = await run(
      [
        'referrals',
        'export',
        '--format',
        'ndjson',
        '--fields',
        'reference,patient.last_name,+partner_metadata.batch',
      ],
      { env: fx.env() },
    );
    expect(r.code).toBe(0);
    const first = JSON.parse(r.stdout.split('\n')[0]!);
    expect(first).toEqual({
      reference: expect.any(String),
      'patient.last_name': expect.any(String),
      'partner_metadata.batch': 0,
    });
  });

  it('JSON visit rows carry cpt_codes and accession_ids as arrays; CSV joins them with "; "', async () => {
    const j = await run(['referrals', 'export', '--rows', 'visit', '--format', 'json'], { env: fx.env() });
    const rows = JSON.parse(j.stdout) as Array<Record<string, unknown>>;
    const withVisit = rows.filter((r) => r.visit_id !== null);
    expect(withVisit.length).toBeGreaterThan(0);
    for (const r of withVisit) {
      expect(Array.isArray(r.cpt_codes)).toBe(true);
      expect(Array.isArray(r.accession_ids)).toBe(true);
    }
    const many = withVisit.find((r) => (r.cpt_codes as string[]).length > 1)!;
    expect(many).toBeDefined();
    const c = await run(['referrals', 'export', '--rows', 'visit', '--fields', 'visit_id,cpt_codes'], {
      env: fx.env(),
    });
    const line = csvRows(c.stdout).find((row) => row[0] === many.visit_id)!;
    expect(line[1]).toBe((many.cpt_codes as string[]).join('; '));
    // A referral with no visit: null, not an empty list.
    expect(rows.filter((r) => r.visit_id === null).every((r) => r.cpt_codes === null)).toBe(true);
  });
});

describe('--bom and --no-formula-guard on every CSV output', () => {
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

  it('export -o FILE --bom starts with the UTF-8 BOM, and the names read back right', async () => {
    const file = join(dir.path, 'bom.csv');
    const r = await run(['referrals', 'export', '--bom', '-o', file], { env: fx.env() });
    expect(r.code).toBe(0);
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, 3)).toEqual(BOM);
    expect(bytes.subarray(3, 14).toString()).toBe('referral_id');
    const names = csvRows(bytes.toString('utf8')).map((row) => row[8]);
    expect(names).toContain('Hernández');
    const plain = await run(['referrals', 'export'], { env: fx.env() });
    expect(plain.stdout.startsWith('referral_id')).toBe(true);
  });

  it('a list and a one-record command with --format csv --bom', async () => {
    const l = await run(['law-firms', 'search', 'Müller', '--format', 'csv', '--bom'], { env: fx.env() });
    expect(l.code).toBe(0);
    expect(l.stdout.startsWith('\ufeffid,name,')).toBe(true);
    expect(l.stdout).toContain('Müller');
    const o = await run(
      ['law-firms', 'create', '--name', 'Bom', '--city', 'C', '--state', 'NY', '--format', 'csv', '--bom'],
      {
        env: fx.env(),
      },
    );
    expect(o.stdout.startsWith('\ufeffid,')).toBe(true);
  });

  it('--bom with an output that is not CSV is exit 2 before any request', async () => {
    const r = await run(['referrals', 'export', '--format', 'ndjson', '--bom'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--bom is for CSV output, not ndjson');
    const t = await run(['modalities', '--bom'], { env: fx.env() });
    expect(t.code).toBe(2);
    expect(fx.apiRequests()).toEqual([]);
  });

  it('list CSV guards +12155550001-style phone numbers; --no-formula-guard writes them as they are', async () => {
    const argv = [
      'referrals',
      'list',
      '--per-page',
      '2',
      '--format',
      'csv',
      '--fields',
      'reference,patient.phone_number',
    ];
    const guarded = csvRows((await run(argv, { env: fx.env() })).stdout);
    expect(guarded[1]![1]).toMatch(/^'\+1\d{10}$/);
    const raw = csvRows((await run([...argv, '--no-formula-guard'], { env: fx.env() })).stdout);
    expect(raw[1]![1]).toMatch(/^\+1\d{10}$/);
    const exported = await run(['referrals', 'export', '--no-formula-guard', '--fields', 'reference'], {
      env: fx.env(),
    });
    expect(exported.code).toBe(0);
  });
});

describe('list CSV columns are stable: documented fields first in a fixed order, then the others sorted', () => {
  it('every page of the emulator has the same header, starting with the documented fields', async () => {
    const headers: string[] = [];
    for (const page of ['1', '2', '3']) {
      const r = await run(['referrals', 'list', '--per-page', '4', '--page', page, '--format', 'csv'], {
        env: fx.env(),
      });
      headers.push(r.stdout.split('\r\n')[0]!);
    }
    expect(new Set(headers).size).toBe(1);
    const columns = headers[0]!.split(',');
    expect(columns.slice(0, REFERRAL_LIST_FIELDS.length)).toEqual([...REFERRAL_LIST_FIELDS]);
    // The computed most_advanced_visit comes last of them: the API's fields keep their places.
    expect(columns[REFERRAL_LIST_FIELDS.length - 1]).toBe('most_advanced_visit');
    expect(columns).not.toContain('auto_book_request');
  });

  it('pages of other shapes (key order, a null object, other extra keys) keep the documented columns in place', async () => {
    const pages: Record<string, unknown> = {
      '1': [
        { zeta: 1, reference: 'R-1', id: 'a', auto_book_request: null, status: 'pending' },
        { id: 'b', reference: 'R-2', status: 'pending', extra: null },
      ],
      '2': [
        {
          status: 'billed',
          auto_book_request: { outcome: 'booked', status: 'completed', new_key: 1 },
          id: 'c',
          alpha: 'x',
          extra: { inner: 2 },
          reference: 'R-3',
        },
      ],
    };
    const srv = await testServer((req, res) => {
      const page = new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? '1';
      json(res, 200, pages[page] ?? []);
    });
    try {
      const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: dir.path };
      const one = csvRows(
        (await run(['referrals', 'list', '--page', '1', '--format', 'csv'], { env })).stdout,
      );
      const two = csvRows(
        (await run(['referrals', 'list', '--page', '2', '--format', 'csv'], { env })).stdout,
      );
      const n = REFERRAL_LIST_FIELDS.length;
      expect(one[0]!.slice(0, n)).toEqual([...REFERRAL_LIST_FIELDS]);
      expect(two[0]!.slice(0, n)).toEqual([...REFERRAL_LIST_FIELDS]);
      expect(one[0]!.slice(n)).toEqual(['extra', 'zeta']);
      expect(two[0]!.slice(n)).toEqual(['alpha', 'auto_book_request.new_key', 'extra.inner']);
      const at = (rows: string[][], row: number, col: string) => rows[row]![rows[0]!.indexOf(col)];
      expect(at(one, 1, 'reference')).toBe('R-1');
      expect(at(one, 1, 'auto_book_request.status')).toBe('');
      expect(at(two, 1, 'auto_book_request.status')).toBe('completed');
      expect(at(two, 1, 'auto_book_request.outcome')).toBe('booked');
    } finally {
      await srv.close();
    }
  });
});

describe('the field sets match what the tool writes', () => {
  it('EXPORT_COLUMNS is the export header of each row kind', async () => {
    for (const rows of ['referral', 'visit', 'procedure'] as const) {
      const r = await run(['referrals', 'export', '--rows', rows, '--per-page', '100'], { env: fx.env() });
      expect(r.stdout.split('\r\n')[0]).toBe(EXPORT_COLUMNS[rows].join(','));
    }
  });
});

describe('CSV formula guard', () => {
  /**
   * The CSV header row of reference and list commands comes from server keys; a
   * hostile server (started here on 127.0.0.1) sending formula keys gets them guarded like cells.
   */

  let srv: Awaited<ReturnType<typeof testServer>> | undefined;

  afterEach(async () => {
    await srv?.close();
    srv = undefined;
  });

  const HOSTILE = {
    id: 'm-1',
    '=HYPERLINK("http://evil.example","click")': 'x',
    '@SUM(1+1)': 'y',
    '\u00a0=1+1': 'z',
    '\uff1d1+1': 'w',
  };

  describe('CSV headers from server keys are guarded like cells', () => {
    // The documented fields come first, then the server's other keys, sorted.
    it.for([
      ['modalities', ['modalities'], [HOSTILE], 'id,name,slug'],
      [
        'icd10 (a paginated list)',
        ['icd10', 'x'],
        { icd10_codes: [HOSTILE], meta: { current_page: 1 } },
        'id,code,short_description',
      ],
      [
        'law-firms create (one record)',
        ['law-firms', 'create', '--name', 'N', '--city', 'C', '--state', 'NY'],
        {
          law_firm: HOSTILE,
        },
        'id,name,address_line_1,address_line_2,city,state,zipcode',
      ],
    ] as const)('%s --format csv', async ([, argv, answer, documented]) => {
      srv = await testServer((_req, res) => json(res, 200, answer));
      const r = await run([...argv, '--format', 'csv'], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: '/nonexistent' },
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const header = r.stdout.split('\r\n')[0]!;
      expect(header).toBe(
        `${documented},"'=HYPERLINK(""http://evil.example"",""click"")",'@SUM(1+1),'\u00a0=1+1,'\uff1d1+1`,
      );
    });
  });

  /**
   * --bom and --no-formula-guard change CSV only: a command that never writes CSV refuses them
   * (exit 2, before it does anything) instead of accepting them silently. The real binary for the first
   * command, the same check in-process for the others.
   */
  describe('--bom and --no-formula-guard on a command that writes no CSV', () => {
    it.for([
      ['cache', 'path'],
      ['config', 'path'],
      ['config', 'set', 'env', 'production'],
      ['completion', 'bash'],
      ['webhook', 'sign', '--body', '-'],
    ])('imaging %s %s: exit 2 for each', async (words) => {
      const { cli, tempDir } = await import('../helpers.js');
      const real = words[0] === 'cache';
      const dir = tempDir();
      try {
        for (const flag of ['--bom', '--no-formula-guard']) {
          const r = await cli(real, [...words, flag], { env: { IMAGING_CONFIG_DIR: dir.path }, input: '{}' });
          expect(r.exitCode, r.stderr).toBe(2);
          expect(r.stderr).toMatch(
            new RegExp(`^error: ${flag} is for CSV output, and imaging [a-z ]+ writes no CSV$`, 'm'),
          );
          expect(r.stdout).toBe('');
        }
        // config set did not run: nothing was written.
        const { readdirSync } = await import('node:fs');
        expect(readdirSync(dir.path)).toEqual([]);
      } finally {
        dir.cleanup();
      }
    });

    it('a command that writes CSV without --fields (config list, auth status) still takes them', async () => {
      const { spawnCli } = await import('../helpers.js');
      const r = await spawnCli(['auth', 'status', '--format', 'csv', '--bom', '--no-formula-guard']);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout.startsWith('\ufeffenvironment,')).toBe(true);
      const c = await spawnCli(['config', 'list', '--format', 'csv', '--bom']);
      expect(c.exitCode, c.stderr).toBe(0);
    });
  });
});

describe('--json keeps fields the tool does not know', () => {
  // `--json` prints the object (or, for lists, each record) with every field the
  // API sent, unknown ones included, never an object the tool rebuilt from the fields it knows.
  // A server on 127.0.0.1 adds fields this tool has never heard of to every answer.

  const ID = '3f1c2b9e-1111-4222-8333-444455556666';

  const EXTRA = { added_later: 'x', nested_extra: { a: [1, 2] } };

  const uuid = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;

  const referral = {
    id: ID,
    reference: 'R-1',
    status: 'pending',
    line_of_business: 'personal_injury',
    payment_type: 'lien',
    incident_state: 'PA',
    visits: [],
    referring_provider: null,
    provider: { id: null, name: null, npi: null },
    law_firm: { id: null, name: null },
    practice: { id: null, name: null },
    icd10_codes: [],
    patient: { id: uuid(1), first_name: 'Ada', last_name: 'L', name: 'Ada L', date_of_birth: '01/02/1990' },
    call_notes: [],
    documents: [],
    answered_medical_questionnaire: false,
    preferred_location: { id: null, name: null },
    scheduling_mode: null,
    auto_book_request: null,
    ...EXTRA,
  };

  const meta = { current_page: 1, total_pages: 1, total_count: 1, next_page: null };

  function answer(method: string, path: string): [number, unknown] | undefined {
    if (method === 'POST' && path === '/api/v2/auth/sso')
      return [
        200,
        { url: 'https://portal.example.test/sso/once', expires_at: '2026-11-22T09:00:00Z', ...EXTRA },
      ];
    if (path === '/api/v2/modalities')
      return [200, { modalities: [{ id: uuid(1), name: 'MRI', slug: 'mri', ...EXTRA }] }];
    if (path === '/api/v2/body_parts')
      return [200, { body_parts: [{ id: uuid(2), name: 'Knee', slug: 'knee', laterality: true, ...EXTRA }] }];
    if (path === '/api/v2/cpt_codes')
      return [
        200,
        {
          cpt_codes: [
            {
              id: uuid(3),
              code: '73721',
              modality_id: uuid(1),
              modality_name: 'MRI',
              body_part_id: uuid(2),
              body_part_name: 'Knee',
              contrast: 'without_contrast',
              laterality: 'left',
              ...EXTRA,
            },
          ],
        },
      ];
    if (path === '/api/v2/icd10_codes')
      return [
        200,
        { icd10_codes: [{ id: uuid(4), code: 'S83.2', short_description: 'Tear', ...EXTRA }], meta },
      ];
    if (method === 'GET' && path === '/api/v2/law_firms')
      return [
        200,
        {
          law_firms: [
            {
              id: uuid(5),
              name: 'Firm',
              address_line_1: 'a',
              city: 'c',
              state: 'PA',
              zipcode: '1',
              ...EXTRA,
            },
          ],
          meta,
        },
      ];
    if (method === 'POST' && path === '/api/v2/law_firms')
      return [
        201,
        {
          law_firm: {
            id: uuid(6),
            name: 'New',
            address_line_1: null,
            city: 'c',
            state: 'PA',
            zipcode: null,
            ...EXTRA,
          },
        },
      ];
    if (method === 'GET' && path === '/api/v2/referrals') return [200, { referrals: [referral], meta }];
    if (method === 'POST' && path === '/api/v2/referrals') return [201, referral];
    if (path === `/api/v2/referrals/${ID}`) return [200, referral];
    return undefined;
  }

  let server: Awaited<ReturnType<typeof testServer>>;

  let dir: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    dir = tempDir();
    server = await testServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const a = answer(req.method ?? 'GET', path);
      if (a) json(res, a[0], a[1]);
      else json(res, 404, { error: `no ${path}` });
    });
  });

  afterAll(async () => {
    await server.close();
    dir.cleanup();
  });

  const cli = (args: string[], stdin?: string) =>
    run(['--env', 'production', '--base-url', server.url, '--yes', ...args], {
      env: { IMAGING_TOKEN: 'unknown-fields-token', IMAGING_CONFIG_DIR: dir.path },
      ...(stdin !== undefined ? { stdin } : {}),
    });

  /** Every key of `EXTRA` at the top of the printed object (or of each printed record). */
  function expectExtras(value: unknown) {
    expect(value).toMatchObject(EXTRA);
  }

  it('sso --json prints the server object: url, expires_at and every other field', async () => {
    const r = await cli(['sso', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(printed).toEqual({
      url: 'https://portal.example.test/sso/once',
      expires_at: '2026-11-22T09:00:00Z',
      ...EXTRA,
    });
  });

  it.each([
    ['modalities', ['modalities']],
    ['body-parts', ['body-parts']],
    ['cpt', ['cpt', '73721']],
    ['icd10', ['icd10', 'tear']],
    ['icd10 --all', ['icd10', 'tear', '--all']],
    ['law-firms search', ['law-firms', 'search', 'firm']],
    ['referrals list', ['referrals', 'list']],
    ['referrals list --all', ['referrals', 'list', '--all']],
  ])('%s --json prints each record with every field', async (_name, args) => {
    const r = await cli([...args, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout) as unknown[];
    expect(printed).toHaveLength(1);
    expectExtras(printed[0]);
    const nd = await cli([...args, '--format', 'ndjson']);
    expect(nd.code, nd.stderr).toBe(0);
    expectExtras(JSON.parse(nd.stdout.trim()));
  });

  it.each([
    ['referrals get', ['referrals', 'get', ID]],
    ['referrals create', ['referrals', 'create', '--file', '-']],
    ['law-firms create', ['law-firms', 'create', '--name', 'New', '--city', 'c', '--state', 'PA']],
  ])('%s --json prints the record with every field', async (_name, args) => {
    const r = await cli([...args, '--json'], '{"patient":{"first_name":"A","last_name":"B"}}');
    expect(r.code, r.stderr).toBe(0);
    expectExtras(JSON.parse(r.stdout));
  });
});

describe('the same bytes as before', () => {
  const fx = mockFixture({ referrals: 450 });
  beforeAll(() => fx.start());
  afterAll(() => fx.stop());

  it('NDJSON: what export writes, and the pages one by one joined; JSON: one pretty-printed array', async () => {
    const env = fx.env();
    const list = await run(['referrals', 'list', '--all', '--per-page', '50', '--format', 'ndjson'], { env });
    expect(list.code).toBe(0);
    const exported = await run(['referrals', 'export', '--format', 'ndjson', '--per-page', '50'], { env });
    expect(list.stdout).toBe(exported.stdout);
    let pages = '';
    for (let p = 1; p <= 9; p++) {
      const one = await run(
        ['referrals', 'list', '--page', String(p), '--per-page', '50', '--format', 'ndjson'],
        { env },
      );
      pages += one.stdout;
    }
    expect(list.stdout).toBe(pages);
    const records = list.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records).toHaveLength(450);
    const asJson = await run(['referrals', 'list', '--all', '--per-page', '50', '--json'], { env });
    expect(asJson.stdout).toBe(`${JSON.stringify(records, null, 2)}\n`);
    // --fields picks the same way page by page.
    const picked = await run(
      ['referrals', 'list', '--all', '--per-page', '50', '--json', '--fields', 'id,status'],
      { env },
    );
    expect(picked.stdout).toBe(
      `${JSON.stringify(
        records.map((r) => ({ id: r.id, status: r.status })),
        null,
        2,
      )}\n`,
    );
  });
});
