import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectTableForms, expectUsageError, piped, plain } from '../../fake-io.js';
import { mockFixture, run } from '../../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('imaging law-firms search', () => {
  it('finds firms: names wrap within 80 columns on a terminal, every column when piped', async () => {
    const json = JSON.parse(
      (await piped(['law-firms', 'search', 'injury', '--json'], { env: fx.env() })).stdout,
    );
    expect(json.length).toBeGreaterThan(3);
    const forms = await bothForms(['law-firms', 'search', 'injury'], { env: fx.env() });
    expectTableForms(
      forms,
      ['NAME', 'CITY', 'STATE', 'ZIP', 'ADDRESS', 'ID'],
      json.map((f: { name: string }) => f.name),
    );
    expect(plain(forms.terminal.stdout)).toMatch(
      /^Friedman "The Hammer" +Rochester +NY +[0-9a-f-]{36}\nInjury Law$/m,
    );
    expect(forms.terminal.stderr).toBe('Left out: Zip, Address (--wide shows all)\n');
    expect(forms.piped.stderr).toBe('');
    for (const firm of json) expect(forms.piped.stdout).toContain(firm.id);
  });

  it('writes CSV a spreadsheet opens safely: quotes where needed, formulas defused', async () => {
    const r = await piped(['law-firms', 'search', 'injury', '--format', 'csv'], { env: fx.env() });
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\r\n');
    expect(rows[0]).toBe('id,name,address_line_1,address_line_2,city,state,zipcode');
    expect(rows).toContain(
      "dcd9df82-efc1-4ec2-9348-03008c763778,'=Equity Injury Lawyers,12 Main St,,Dallas,TX,75201",
    );
    expect(rows).toContain(
      'fa7ba249-ffa7-454e-9a98-e2ea9156f805,"Friedman ""The Hammer"" Injury Law",9 Lake Ave,,Rochester,NY,14608',
    );
  });

  it('says so when nothing matches, and exits 0', async () => {
    const { terminal, piped: p } = await bothForms(['law-firms', 'search', 'zzzqqq'], { env: fx.env() });
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/no law firms/i);
    }
    expect((await piped(['law-firms', 'search', 'zzzqqq', '--json'], { env: fx.env() })).stdout).toBe('[]\n');
  });

  it('refuses a missing or blank query before any request', async () => {
    expectUsageError(
      await piped(['law-firms', 'search'], { env: fx.env() }),
      /missing required argument 'query'/,
      fx.apiRequests().length,
    );
    expectUsageError(
      await piped(['law-firms', 'search', '  '], { env: fx.env() }),
      /the search query is empty/,
      fx.apiRequests().length,
    );
  });
});

describe('law-firms search', () => {
  beforeEach(() => fx.reset());

  it('searches, keeping awkward names intact in every format', async () => {
    const j = JSON.parse(
      (await run(['law-firms', 'search', 'partners', '--json'], { env: fx.env() })).stdout,
    );
    expect(j.map((f: { name: string }) => f.name)).toContain('Smith, Jones & "Partners" LLP');
    const csv = await run(['law-firms', 'search', 'partners', '--format', 'csv'], { env: fx.env() });
    expect(csv.stdout).toContain('"Smith, Jones & ""Partners"" LLP"');
    const eq = await run(['law-firms', 'search', 'equity', '--format', 'csv'], { env: fx.env() });
    expect(eq.stdout).toContain("'=Equity Injury Lawyers");
    const t = await run(['law-firms', 'search', 'Nguy'], { env: fx.env() });
    expect(t.stdout).toContain('Nguyễn Law Office');
  });

  it('exits 5 when the endpoint is not enabled for the account', async () => {
    const r = await run(['law-firms', 'search', 'law'], { env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }) });
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('endpoint_not_enabled');
  });
});
