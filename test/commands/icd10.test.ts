import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, lines, piped, plain, widest } from '../fake-io.js';
import { mockFixture } from '../helpers.js';

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
