import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, lines, onTerminal, piped, plain } from '../../fake-io.js';
import { mockFixture } from '../../helpers.js';

const fx = mockFixture({ referrals: 60 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const HEADER =
  'referral_id,reference,referral_status,line_of_business,payment_type,incident_state,patient_id,patient_first_name,patient_last_name,patient_date_of_birth,law_firm_id,law_firm_name,practice_id,practice_name,payor_id,payor_name,insurance_number,wc_number,referring_provider,provider_name,provider_npi,scheduling_mode,icd10_codes,visit_count,latest_visit_status,auto_book_status,auto_book_outcome';

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

  it('refuses bad options before any request, and writes no file', async () => {
    const seen = () => fx.apiRequests().length;
    expectUsageError(
      await piped(['referrals', 'export', '--rows', 'patient'], { env: fx.env() }),
      /--rows: unknown row kind "patient"|patient/,
      seen(),
    );
    expectUsageError(
      await piped(['referrals', 'export', '--output', ''], { env: fx.env() }),
      /--output needs a file name/,
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
