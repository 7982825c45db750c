import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  bothForms,
  expectTableForms,
  expectUsageError,
  hasEscapes,
  lines,
  piped,
  plain,
} from '../../fake-io.js';
import { mockFixture } from '../../helpers.js';

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
