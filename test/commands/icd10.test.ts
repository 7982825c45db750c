import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, lines, piped, plain, widest } from '../fake-io.js';
import { mockFixture, run } from '../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('imaging icd10', () => {
  it('searches codes: long descriptions wrap at 80 columns, stay whole when piped', async () => {
    const { terminal, piped: p } = await bothForms(['icd10', 'knee'], { env: fx.env() });
    const note = 'Page 1 of 2 (45 ICD-10 codes). Next: --page 2, or --all.\n';
    expect(terminal.code).toBe(0);
    expect(widest(terminal.stdout)).toBeLessThanOrEqual(80);
    expect(terminal.stdout).toContain('\u001b[1m');
    // A description too long for the terminal continues on the next line, in its own column.
    expect(plain(terminal.stdout)).toMatch(
      /^M23\.211 +Derangement of anterior horn of +[0-9a-f-]{36}\n +medial meniscus/m,
    );
    expect(terminal.stderr).toBe(note);
    expect(p.code).toBe(0);
    expect(hasEscapes(p.stdout)).toBe(false);
    expect(lines(p.stdout)[0]!.split(/ {2,}/)).toEqual(['CODE', 'DESCRIPTION', 'ID']);
    expect(p.stdout).toMatch(
      /^M23\.211 +Derangement of anterior horn of medial meniscus due to old tear, right knee +[0-9a-f-]{36}$/m,
    );
    expect(lines(p.stdout)).toHaveLength(26);
    expect(p.stderr).toBe(note);
  });

  it('walks every page with --all and gives the same codes as JSON', async () => {
    const all = JSON.parse((await piped(['icd10', 'knee', '--all', '--json'], { env: fx.env() })).stdout);
    expect(all).toHaveLength(45);
    expect(new Set(all.map((c: { id: string }) => c.id)).size).toBe(45);
    const nd = await piped(['icd10', 'knee', '--all', '--format', 'ndjson'], { env: fx.env() });
    expect(lines(nd.stdout).map((l) => JSON.parse(l))).toEqual(all);
  });

  it('refuses a malformed --ids before any request', async () => {
    expectUsageError(
      await piped(['icd10', 'knee', '--ids', 'nope'], { env: fx.env() }),
      /--ids: not a UUID: nope/,
      fx.apiRequests().length,
    );
    expectUsageError(
      await piped(['icd10', '--ids', ','], { env: fx.env() }),
      /--ids needs at least one id/,
      fx.apiRequests().length,
    );
  });
});

describe('icd10', () => {
  beforeEach(() => fx.reset());

  it('shows one page with a hint about the rest', async () => {
    const r = await run(['icd10', 'knee'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/Page 1 of \d+ \(\d+ ICD-10 codes\)\. Next: --page 2, or --all\./);
  });

  it('fetches every page with --all, in order, with no duplicates', async () => {
    const all = JSON.parse((await run(['icd10', '--all', '--json'], { env: fx.env() })).stdout);
    expect(all.length).toBe(fx.mock.data.icd10.length);
    expect(all.length).toBeGreaterThanOrEqual(250);
    expect(new Set(all.map((x: { id: string }) => x.id)).size).toBe(all.length);
    expect(fx.apiRequests().every((q) => q.path.includes('per_page=100'))).toBe(true);
  });

  it('passes page, per_page and ids[] through', async () => {
    const ids = fx.mock.data.icd10.slice(-2).map((x) => x.id);
    const r = await run(
      ['icd10', 'pain', '--page', '2', '--per-page', '5', '--ids', ids.join(','), '--json'],
      {
        env: fx.env(),
      },
    );
    expect(r.code).toBe(0);
    const path = fx.apiRequests()[0]!.path;
    expect(path).toContain('page=2');
    expect(path).toContain('per_page=5');
    expect(path).toContain(`ids[]=${ids[0]}&ids[]=${ids[1]}`);
  });

  it('streams NDJSON page by page with --all', async () => {
    const r = await run(['icd10', 'S83', '--all', '--per-page', '10', '--format', 'ndjson'], {
      env: fx.env(),
    });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBe(fx.mock.data.icd10.filter((x) => x.code.includes('S83')).length);
  });

  it.each([
    [['icd10', '--per-page', '0'], /--per-page must be between 1 and 1000/],
    [['icd10', '--page', 'abc'], /--page must be a whole number/],
    [['icd10', '--ids', 'not-a-uuid'], /not a UUID/],
    [['icd10', '--all', '--page', '2'], /--all and --page/],
    [['icd10', '--format', 'xml'], /unknown format "xml"/],
  ])('%j is a usage error before any request', async (argv, message) => {
    const r = await run(argv, { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(fx.apiRequests()).toHaveLength(0);
  });
});
