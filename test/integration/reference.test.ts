import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockFixture, run } from '../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('cpt', () => {
  it('prints a table of every mapping for people (piped: no colour, no truncation)', async () => {
    const r = await run(['cpt', '73721'], { env: fx.env() });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CODE\s+MODALITY\s+BODY PART\s+CONTRAST\s+LATERALITY\s+MODIFIER\s+VIEWS\s+ID$/);
    expect(lines.length).toBe(7);
    expect(r.stdout).toMatch(/73721\s+MRI\s+Knee\s+without_contrast\s+left\s+LT/);
    expect(r.stdout).not.toContain('\u001b[');
    expect(r.stderr).toBe('');
  });

  it('fits the terminal by column priority, nothing cut, and colours headers', async () => {
    const r = await run(['cpt', '73721'], { env: fx.env(), stdoutIsTTY: true, columns: 60 });
    for (const line of r.stdout.trimEnd().split('\n')) {
      expect(line.replace(/\u001b\[[0-9;]*m/g, '').length).toBeLessThanOrEqual(60);
    }
    expect(r.stdout).not.toContain('…');
    expect(r.stdout).toMatch(/73721 +MRI +Knee +without_contrast +left\n/);
    expect(r.stdout).toContain('\u001b[1m');
    expect(r.stderr).toBe('Left out: Modifier, Views, ID (--wide shows all)\n');
    const wide = await run(['cpt', '73721', '--wide'], { env: fx.env(), stdoutIsTTY: true, columns: 60 });
    expect(wide.stderr).toBe('');
    expect(wide.stdout).toMatch(/73721 +MRI +Knee +without_contrast +left +LT +- +[0-9a-f-]{36}\n/);
  });

  it('honours NO_COLOR on a terminal', async () => {
    const r = await run(['cpt', '73721'], {
      env: fx.env({ NO_COLOR: '1' }),
      stdoutIsTTY: true,
      columns: 200,
    });
    expect(r.stdout).not.toContain('\u001b[');
  });

  it('prints every field the API sent with --json', async () => {
    const r = await run(['cpt', '73721', '--json'], { env: fx.env() });
    const data = JSON.parse(r.stdout);
    expect(data).toHaveLength(6);
    expect(Object.keys(data[0]).sort()).toEqual(
      [
        'body_part_id',
        'body_part_name',
        'code',
        'contrast',
        'id',
        'laterality',
        'modality_id',
        'modality_name',
        'modifier_id',
        'modifier_name',
        'number_of_views',
      ].sort(),
    );
  });

  it('prints NDJSON and CSV for scripts', async () => {
    const nd = await run(['cpt', '73560', '--format', 'ndjson'], { env: fx.env() });
    const lines = nd.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const l of lines) expect(JSON.parse(l).code).toBe('73560');
    const csv = await run(['--format', 'csv', 'cpt', '73560'], { env: fx.env() });
    expect(csv.stdout.split('\r\n')[0]).toBe(
      'id,code,modality_id,modality_name,body_part_id,body_part_name,contrast,laterality,modifier_id,modifier_name,number_of_views',
    );
  });

  it('accepts global options after the subcommand', async () => {
    const r = await run(['cpt', '73721', '--format', 'json'], { env: fx.env() });
    expect(() => JSON.parse(r.stdout)).not.toThrow();
  });

  it('exits 0 with a hint on stderr when nothing matches', async () => {
    const r = await run(['cpt', '99999'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('No procedure mappings for code 99999');
    const j = await run(['cpt', '99999', '--json'], { env: fx.env() });
    expect(j.stdout.trim()).toBe('[]');
  });

  it('rejects a malformed code before any request', async () => {
    const r = await run(['cpt', '7372'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"7372" is not a CPT or HCPCS code');
    expect(fx.apiRequests()).toHaveLength(0);
  });
});

describe('icd10', () => {
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

describe('modalities and body parts', () => {
  it('lists modalities', async () => {
    const r = await run(['modalities'], { env: fx.env() });
    expect(r.stdout).toMatch(/^NAME\s+SLUG\s+ID/);
    expect(r.stdout).toContain('MRI');
  });
  it('filters body parts by modality name', async () => {
    const r = await run(['body-parts', '--modality', 'Ultrasound', '--json'], { env: fx.env() });
    const names = JSON.parse(r.stdout).map((b: { name: string }) => b.name);
    expect(names).toContain('Knee');
    expect(names).not.toContain('Brain');
    expect(fx.apiRequests()[0]!.path).toBe('/api/v2/body_parts?modality=Ultrasound');
  });
  it('hints when a modality matches nothing', async () => {
    const r = await run(['body-parts', '--modality', 'Telepathy'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('No body parts for modality "Telepathy"');
  });
});

describe('law-firms', () => {
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

  it('creates a firm with a { law_firm } body and shows it', async () => {
    const r = await run(
      [
        'law-firms',
        'create',
        '--name',
        'Brand New Injury Law',
        '--city',
        'Reno',
        '--state',
        'nv',
        '--zipcode',
        '89501',
        '--address-line-1',
        '1 Main St',
      ],
      { env: fx.env() },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Name:\s+Brand New Injury Law/);
    expect(r.stdout).toMatch(/State:\s+NV/);
    const again = await run(['law-firms', 'search', 'Brand New', '--json'], { env: fx.env() });
    expect(JSON.parse(again.stdout)).toHaveLength(1);
  });

  it('lists the 422 errors and exits 7', async () => {
    const r = await run(
      [
        'law-firms',
        'create',
        '--name',
        "O'Brien & Associates, P.C.",
        '--city',
        'Philadelphia',
        '--state',
        'PA',
      ],
      {
        env: fx.env(),
      },
    );
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('422 Unprocessable Entity');
    expect(r.stderr).toContain('- Name has already been taken in this city');
    expect(r.stderr).toMatch(/request id: req_[0-9a-f]+/);
  });

  it('checks the state before sending anything', async () => {
    const r = await run(['law-firms', 'create', '--name', 'X', '--city', 'Y', '--state', 'Nevada'], {
      env: fx.env(),
    });
    expect(r.code).toBe(2);
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('requires the mandatory flags', async () => {
    const r = await run(['law-firms', 'create', '--name', 'X'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/required option '--city <city>' not specified/);
  });

  it('exits 5 when the endpoint is not enabled for the account', async () => {
    const r = await run(['law-firms', 'search', 'law'], { env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }) });
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('endpoint_not_enabled');
  });
});
