import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/main.js';
import { cellOf, openSheet } from '../../src/output/xlsx.js';
import { expectUsageError, onTerminal, piped } from '../fake-io.js';
import { BIN, fakeIO, json, mockFixture, spawnCli, tempDir, testServer } from '../helpers.js';

/**
 * Excel workbooks (`--format xlsx`, `-o NAME.xlsx`): read back with exceljs's reader, cell by cell
 * against the CSV export of the same data. Opening them with LibreOffice is scripts/workbook-check.sh
 * (a CI step of its own).
 */

const fx = mockFixture({ referrals: 40 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const V = ExcelJS.ValueType;

async function read(bytes: Buffer) {
  const book = new ExcelJS.Workbook();
  await book.xlsx.load(bytes as unknown as ArrayBuffer);
  expect(book.worksheets).toHaveLength(1);
  return book.worksheets[0] as ExcelJS.Worksheet;
}

/** Runs in-process and returns standard output's bytes (a workbook is not text). */
async function bytesOf(
  argv: string[],
  env: NodeJS.ProcessEnv = fx.env(),
): Promise<{ code: number; out: Buffer; stderr: string }> {
  const { io, stderr } = fakeIO();
  const chunks: Buffer[] = [];
  io.stdout.write = ((chunk: Buffer | string, ...rest: unknown[]) => {
    chunks.push(Buffer.from(chunk));
    const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    cb?.();
    return true;
  }) as typeof io.stdout.write;
  const code = await main(argv, {
    io,
    env: { PATH: process.env.PATH, IMAGING_KEYCHAIN: 'off', ...env },
  });
  return { code, out: Buffer.concat(chunks), stderr: stderr() };
}

/** A cell as CSV writes it: dates back to the API's text, numbers and booleans as written. */
function asCsv(cell: ExcelJS.Cell, source: string): string {
  if (cell.type === V.Null) return '';
  if (cell.type === V.Date) {
    const at = (cell.value as Date).toISOString();
    return /^\d{4}-\d{2}-\d{2}$/.test(source)
      ? at.slice(0, 10)
      : new Date(source).toISOString() === at
        ? source
        : at;
  }
  if (cell.type === V.Boolean) return String(cell.value);
  return String(cell.value);
}

describe('Excel workbooks', () => {
  it('export -o NAME.xlsx: one sheet, the header frozen, an autofilter, the same cells as CSV, typed; 0600, nothing left beside it', async () => {
    const dir = tempDir();
    try {
      const target = join(dir.path, 'cases.xlsx');
      const r = await onTerminal(['referrals', 'export', '--per-page', '15', '-o', target], {
        env: fx.env(),
      });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/Exported 40 referral rows \(xlsx\) from 40 referrals read in 3 pages/);
      expect(statSync(target).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir.path)).toEqual(['cases.xlsx']);
      const bytes = readFileSync(target);
      expect(bytes.subarray(0, 4).toString('latin1')).toBe('PK\u0003\u0004'); // a zip
      const sheet = await read(bytes);
      expect(sheet.name).toBe('Referrals');
      expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
      const csv = parse(
        (await piped(['referrals', 'export', '--per-page', '15', '--no-formula-guard'], { env: fx.env() }))
          .stdout,
      ) as string[][];
      const header = csv[0] as string[];
      expect(sheet.autoFilter).toBe(`A1:${sheet.getColumn(header.length).letter}${csv.length}`);
      expect(sheet.rowCount).toBe(csv.length);
      const col = (name: string) => header.indexOf(name) + 1;
      for (let i = 0; i < csv.length; i++) {
        const row = sheet.getRow(i + 1);
        const expected = csv[i] as string[];
        expect(
          expected.map((source, c) => asCsv(row.getCell(c + 1), source)),
          `row ${i + 1}`,
        ).toEqual(expected);
      }
      // Every header cell, id and code is text; counts are numbers; dates of birth are dates.
      for (let c = 1; c <= header.length; c++) expect(sheet.getRow(1).getCell(c).type).toBe(V.String);
      const second = sheet.getRow(3);
      expect(second.getCell(col('referral_id')).type).toBe(V.String);
      expect(second.getCell(col('visit_count')).type).toBe(V.Number);
      expect(second.getCell(col('patient_date_of_birth')).type).toBe(V.Date);
      expect(second.getCell(col('wc_number')).type).toBe(V.String);
      const npi = sheet.getRow(2).getCell(col('provider_npi'));
      expect([npi.type, npi.value]).toEqual([V.String, '1100000000']);

      // Visit rows: the API's date-times are dates, in UTC, shown with "UTC".
      const visits = join(dir.path, 'visits.xlsx');
      expect(
        (await piped(['referrals', 'export', '--rows', 'visit', '-o', visits], { env: fx.env() })).code,
      ).toBe(0);
      const vs = await read(readFileSync(visits));
      expect(vs.name).toBe('Visits');
      const vcsv = parse(
        (await piped(['referrals', 'export', '--rows', 'visit'], { env: fx.env() })).stdout,
      ) as string[][];
      const start = (vcsv[0] as string[]).indexOf('start_time');
      const at = vcsv.findIndex((r) => r[start] !== '' && r !== vcsv[0]);
      const cell = vs.getRow(at + 1).getCell(start + 1);
      expect([cell.type, cell.numFmt]).toEqual([V.Date, 'yyyy-mm-dd hh:mm:ss "UTC"']);
      expect((cell.value as Date).getTime()).toBe(Date.parse(vcsv[at]![start]!));
      expect(vs.rowCount).toBe(vcsv.length);
    } finally {
      dir.cleanup();
    }
  });

  it('a formula-looking name stays a string, a leading-zero ZIP stays text, on a list to a pipe', async () => {
    const body = JSON.stringify({
      patient: { first_name: '=HYPERLINK("http://evil.example","x")', last_name: '+1+1', zip_code: '02134' },
    });
    const created = await piped(['referrals', 'create', '--file', '-', '--json'], {
      env: fx.env(),
      stdin: body,
    });
    expect(created.code).toBe(0);
    const id = JSON.parse(created.stdout).id as string;
    const { code, out } = await bytesOf(['referrals', 'list', '--per-page', '100', '--format', 'xlsx']);
    expect(code).toBe(0);
    const sheet = await read(out);
    expect(sheet.name).toBe('Referrals');
    const header = (sheet.getRow(1).values as unknown[]).slice(1) as string[];
    const col = (name: string) => header.indexOf(name) + 1;
    let row: ExcelJS.Row | undefined;
    sheet.eachRow((r) => {
      if (r.getCell(col('id')).value === id) row = r;
    });
    expect(row).toBeDefined();
    for (const [name, value] of [
      ['patient.first_name', '=HYPERLINK("http://evil.example","x")'],
      ['patient.last_name', '+1+1'],
      ['patient.zip_code', '02134'],
    ] as const) {
      const cell = row!.getCell(col(name));
      expect([name, cell.type, cell.value, cell.formula]).toEqual([name, V.String, value, undefined]);
    }
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(sheet.autoFilter).toMatch(/^A1:[A-Z]+\d+$/);
  });

  it('icd10, referrals find and law-firms search take --format xlsx; a ZIP code stays text', async () => {
    const icd = await bytesOf(['icd10', 'knee', '--format', 'xlsx']);
    expect(icd.code).toBe(0);
    expect((await read(icd.out)).name).toBe('ICD-10 codes');
    const found = await bytesOf(['referrals', 'find', 'garcia', '--format', 'xlsx']);
    expect(found.code).toBe(0);
    expect((await read(found.out)).getRow(2).getCell(2).value).toMatch(/^R-\d+$/);
    const firms = await bytesOf(['law-firms', 'search', 'Boston', '--format', 'xlsx']);
    expect(firms.code).toBe(0);
    const sheet = await read(firms.out);
    const header = (sheet.getRow(1).values as unknown[]).slice(1) as string[];
    const zip = sheet.getRow(2).getCell(header.indexOf('zipcode') + 1);
    expect([zip.type, zip.value]).toEqual([V.String, '02109']);
  });

  it('refuses a terminal as standard output (exit 2, before any request); only the list-like commands take xlsx', async () => {
    // Each hint names a file that fits what is listed.
    for (const [argv, file] of [
      [['referrals', 'export', '--format', 'xlsx'], 'referrals.xlsx'],
      [['referrals', 'export', '-o', '-', '--format', 'xlsx'], 'referrals.xlsx'],
      [['referrals', 'list', '--format', 'xlsx'], 'referrals.xlsx'],
      [['icd10', 'knee', '--format', 'xlsx'], 'icd-10-codes.xlsx'],
      [['referrals', 'find', 'garcia', '--format', 'xlsx'], 'referrals.xlsx'],
      [['law-firms', 'search', 'Boston', '--format', 'xlsx'], 'law-firms.xlsx'],
    ] as Array<[string[], string]>) {
      const r = await onTerminal(argv, { env: fx.env() });
      expectUsageError(r, /--format xlsx writes an Excel workbook/, 0);
      expect(r.stderr, argv.join(' ')).toContain(`> ${file}`);
    }
    expectUsageError(
      await piped(['referrals', 'get', 'R-240001', '--format', 'xlsx'], { env: fx.env() }),
      /--format xlsx is not available here/,
      0,
    );
    expectUsageError(
      await piped(['referrals', 'export', '--format', 'xlsx', '--bom'], { env: fx.env() }),
      /--bom is for CSV output/,
      0,
    );
    const dir = tempDir();
    try {
      expectUsageError(
        await piped(['referrals', 'export', '--resumable', '-o', join(dir.path, 'a.xlsx')], {
          env: fx.env(),
        }),
        /--resumable is for CSV, JSON and NDJSON/,
        0,
      );
      expect(readdirSync(dir.path)).toEqual([]);
    } finally {
      dir.cleanup();
    }
  });

  it('an unknown -o extension (.xls, .txt) says it writes CSV', async () => {
    const dir = tempDir();
    try {
      const xls = await piped(['referrals', 'export', '-o', join(dir.path, 'cases.xls')], { env: fx.env() });
      expect(xls.code).toBe(0);
      expect(xls.stderr).toMatch(
        /^warning: writing CSV into .*cases\.xls: \.xls is not a format this tool writes .* For Excel, name it \.xlsx\.\n/,
      );
      const txt = await piped(['referrals', 'export', '-o', join(dir.path, 'cases.txt')], { env: fx.env() });
      expect(txt.stderr).toMatch(/^warning: writing CSV into .*cases\.txt: \.txt is not a format/);
      expect(readFileSync(join(dir.path, 'cases.txt'), 'utf8')).toMatch(/^referral_id,/);
      const named = await piped(['referrals', 'export', '--format', 'csv', '-o', join(dir.path, 'plain')], {
        env: fx.env(),
      });
      expect(named.stderr).not.toContain('warning');
    } finally {
      dir.cleanup();
    }
  });

  it('a long integer is text in any column (mrn, account, lawFirmId); a cell is cut to 32,767 characters, said once', async () => {
    const listed = await piped(['referrals', 'list', '--per-page', '1', '--json'], { env: fx.env() });
    const one = JSON.parse(listed.stdout)[0];
    // As /tmp/atk23/list.mjs: numbers past what a double or Excel keeps, in columns not named as ids.
    const raw = JSON.stringify({
      referrals: [
        {
          ...one,
          mrn: 0,
          account: 0,
          visits_count: 3,
          nested: { lawFirmId: 1 },
          notes: 'n'.repeat(40_000),
          memo: 'm'.repeat(40_000),
        },
      ],
      meta: { current_page: 1, total_pages: 1 },
    })
      .replace('"mrn":0', '"mrn":98765432109876543210')
      .replace('"account":0', '"account":900719925474099312345')
      .replace('"lawFirmId":1', '"lawFirmId":12345678901234567');
    const srv = await testServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(raw);
    });
    const dir = tempDir();
    try {
      const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: dir.path };
      const r = await bytesOf(['referrals', 'list', '--format', 'xlsx'], env);
      expect(r.code, r.stderr).toBe(0);
      const sheet = await read(r.out);
      const header = (sheet.getRow(1).values as unknown[]).slice(1) as string[];
      const cell = (name: string) => sheet.getRow(2).getCell(header.indexOf(name) + 1);
      expect([cell('mrn').type, cell('mrn').value]).toEqual([V.String, '98765432109876540000']);
      expect([cell('account').type, cell('account').value]).toEqual([V.String, '900719925474099300000']);
      expect([cell('nested.lawFirmId').type, cell('nested.lawFirmId').value]).toEqual([
        V.String,
        '12345678901234568',
      ]);
      expect([cell('visits_count').type, cell('visits_count').value]).toEqual([V.Number, 3]);
      for (const name of ['notes', 'memo']) {
        const text = String(cell(name).value);
        expect(text).toHaveLength(32_767);
        expect(text.endsWith('…[truncated]')).toBe(true);
      }
      expect(r.stderr.match(/cut to fit/g)).toHaveLength(1);
      expect(r.stderr).toContain("a cell longer than Excel's 32,767 characters was cut to fit");
    } finally {
      await srv.close();
      dir.cleanup();
    }
  });

  it('more rows than a sheet holds (the count on page 1): exit 2 before anything is written, no file', async () => {
    const listed = await piped(['referrals', 'list', '--per-page', '1', '--json'], { env: fx.env() });
    const one = JSON.parse(listed.stdout)[0];
    const srv = await testServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const page = Number(url.searchParams.get('page') ?? 1);
      json(res, 200, {
        referrals: [{ ...one, id: `00000000-0000-4000-8000-${String(page).padStart(12, '0')}` }],
        meta: { current_page: page, next_page: page + 1, total_pages: 2_000_000, total_count: 2_000_000 },
      });
    });
    const dir = tempDir();
    try {
      const target = join(dir.path, 'all.xlsx');
      const env = { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: dir.path };
      const r = await piped(['referrals', 'export', '--per-page', '1', '-o', target], { env });
      expect(r.stderr).toMatch(/the API counts 2,000,000: more than the 1,048,575 rows an Excel sheet holds/);
      expect(r.code).toBe(2);
      expect(readdirSync(dir.path).filter((f) => f !== 'config.json')).toEqual([]);
    } finally {
      await srv.close();
      dir.cleanup();
    }
  });

  it('the built binary streams the workbook into the target: no temporary file anywhere (TMPDIR stays empty)', async () => {
    const dir = tempDir();
    const tmp = tempDir();
    try {
      const target = join(dir.path, 'cases.xlsx');
      const r = await spawnCli(['referrals', 'export', '-o', target], {
        env: { ...fx.env(), TMPDIR: tmp.path, TMP: tmp.path, TEMP: tmp.path },
      });
      expect(r.exitCode).toBe(0);
      expect((await read(readFileSync(target))).rowCount).toBeGreaterThan(40); // the header and every referral
      expect(readdirSync(dir.path)).toEqual(['cases.xlsx']);
      expect(readdirSync(tmp.path)).toEqual([]);
    } finally {
      dir.cleanup();
      tmp.cleanup();
    }
  });

  it('Ctrl-C (a real SIGINT) mid-export leaves no file and no temporary file', async () => {
    const dir = tempDir();
    try {
      fx.setLatency(80);
      const target = join(dir.path, 'cases.xlsx');
      const child = spawn(
        process.execPath,
        [BIN, 'referrals', 'export', '--per-page', '5', '--concurrency', '1', '-o', target],
        {
          env: { ...fx.env(), PATH: process.env.PATH, IMAGING_KEYCHAIN: 'off' },
        },
      );
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((ok) => child.on('close', (code) => ok(code)));
      while (fx.apiRequests().length < 3) await new Promise((r) => setTimeout(r, 10));
      expect(readdirSync(dir.path)).toHaveLength(1); // the hidden temporary file, being written
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(stderr).toContain('interrupted');
      expect(readdirSync(dir.path)).toEqual([]);
    } finally {
      fx.setLatency(0);
      dir.cleanup();
    }
  });
});

describe('openSheet', () => {
  it('a stream that passes the sheet size midway stops with exit 2; nothing of the workbook was finished', async () => {
    const { PassThrough } = await import('node:stream');
    const out = new PassThrough();
    const sheet = await openSheet(out, {
      name: 'Referrals',
      header: ['id'],
      what: 'the export has',
      limit: 2,
    });
    sheet.add(['a']);
    sheet.add(['b']);
    expect(() => sheet.add(['c'])).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message: 'the export has more than the 1,048,575 rows an Excel sheet holds',
      }),
    );
    expect(sheet.rows).toBe(2);
  });
});

describe('cellOf', () => {
  it('types values as the workbook holds them', () => {
    expect(cellOf('visit_count', 3)).toEqual({ value: 3 });
    expect(cellOf('provider_npi', 1234567890)).toEqual({ value: '1234567890' });
    expect(cellOf('zipcode', 2134)).toEqual({ value: '2134' });
    expect(cellOf('zip_code', '02134')).toEqual({ value: '02134' });
    expect(cellOf('accession_id', '12345678901234567890')).toEqual({ value: '12345678901234567890' });
    expect(cellOf('notes', '1e10')).toEqual({ value: '1e10' });
    expect(cellOf('created_at', '2026-03-01T10:15:00-05:00')).toEqual({
      value: new Date('2026-03-01T15:15:00Z'),
      numFmt: 'yyyy-mm-dd hh:mm:ss "UTC"',
    });
    expect(cellOf('date_of_birth', '1954-01-17')).toEqual({
      value: new Date('1954-01-17T00:00:00Z'),
      numFmt: 'yyyy-mm-dd',
    });
    expect(cellOf('reference', '2026-03-01')).toEqual({ value: '2026-03-01' });
    expect(cellOf('created_at', '2026-03-01T10:15:00')).toEqual({ value: '2026-03-01T10:15:00' }); // no zone: text
    expect(cellOf('date_of_birth', '1850-01-01')).toEqual({ value: '1850-01-01' });
    expect(cellOf('date_of_birth', '2026-02-30')).toEqual({ value: '2026-02-30' }); // not March 2
    expect(cellOf('start_time', '2026-01-06T24:00:00Z')).toEqual({ value: '2026-01-06T24:00:00Z' });
    expect(cellOf('name', '=1+1')).toEqual({ value: '=1+1' });
    expect(cellOf('name', 'a\uD800b')).toEqual({ value: 'a\uFFFDb' });
    expect(cellOf('flag', true)).toEqual({ value: true });
    expect(cellOf('codes', ['A', 'B'])).toEqual({ value: '["A","B"]' });
    expect(cellOf('x', null)).toEqual({ value: null });
  });
});
