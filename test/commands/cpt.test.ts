import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectTableForms, expectUsageError, piped, plain } from '../fake-io.js';
import { mockFixture, run, tempDir } from '../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('imaging cpt', () => {
  it('shows every mapping of a code: all columns piped, the id left out at 80 columns', async () => {
    const forms = await bothForms(['cpt', '73721'], { env: fx.env() });
    expectTableForms(
      forms,
      ['CODE', 'MODALITY', 'BODY PART', 'CONTRAST', 'LATERALITY', 'MODIFIER', 'VIEWS', 'ID'],
      Array(6).fill('73721'),
    );
    expect(plain(forms.terminal.stdout)).toMatch(/^73721 +MRI +Knee +without_contrast +left +LT +-$/m);
    expect(forms.terminal.stderr).toBe('Left out: ID (--wide shows all)\n');
    expect(forms.piped.stderr).toBe('');
    expect(forms.piped.stdout).toMatch(/^73721 +MRI +Knee +without_contrast +left +LT +- +[0-9a-f-]{36}$/m);
  });

  it('gives the same mappings as JSON, NDJSON and CSV', async () => {
    const json = JSON.parse((await piped(['cpt', '73721', '--json'], { env: fx.env() })).stdout);
    expect(json).toHaveLength(6);
    const nd = await piped(['cpt', '73721', '--format', 'ndjson'], { env: fx.env() });
    expect(
      nd.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(json);
    const csv = (await piped(['cpt', '73721', '--format', 'csv'], { env: fx.env() })).stdout.split('\r\n');
    expect(csv[0]).toBe(
      'id,code,modality_id,modality_name,body_part_id,body_part_name,contrast,laterality,modifier_id,modifier_name,number_of_views',
    );
    expect(csv[1]!.startsWith(`${json[0].id},73721,`)).toBe(true);
  });

  it('refuses a missing or malformed code before any request', async () => {
    expectUsageError(
      await piped(['cpt'], { env: fx.env() }),
      /missing required argument 'code'/,
      fx.apiRequests().length,
    );
    const bad = await piped(['cpt', 'abc'], { env: fx.env() });
    expectUsageError(bad, /"abc" is not a CPT or HCPCS code/, fx.apiRequests().length);
    expect(bad.stderr).toContain('hint: A code is five letters or digits');
  });

  it('given words, says the API looks up exact codes only and points to body-parts, before any request', async () => {
    const before = fx.apiRequests().length;
    const r = await piped(['cpt', 'knee mri'], { env: fx.env() });
    expectUsageError(r, /"knee mri" is words, not a code: the API looks up exact CPT codes only/, before);
    expect(r.stderr).toContain('imaging body-parts --modality MRI');
    const ct = await piped(['cpt', 'Shoulder CT'], { env: fx.env() });
    expectUsageError(ct, /exact CPT codes only/, before);
    expect(ct.stderr).toContain('imaging body-parts --modality CT');
    const plainWord = await piped(['cpt', 'knee'], { env: fx.env() });
    expectUsageError(plainWord, /exact CPT codes only/, before);
    expect(plainWord.stderr).toContain('imaging modalities lists the others');
  });
});

describe('cpt at 80 columns', () => {
  it('shows an enumerated value whole, leaving a column out instead of breaking it', async () => {
    const r = await run(['cpt', '70553'], {
      env: fx.env({ NO_COLOR: '1' }),
      stdoutIsTTY: true,
      columns: 80,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\bwithout_and_with_contrast\b/);
    for (const line of r.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(r.stderr).toMatch(/^Left out: .*\(--wide shows all\)$/m);
  });
});

describe('CPT and HCPCS codes', () => {
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

  it.for(['G0202', 'g0202', '0001F', '0042T', '73721'])('%s is asked for, not refused', async (code) => {
    const r = await run(['cpt', code, '--json'], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(fx.apiRequests().at(-1)!.path).toContain(`code=${code.toUpperCase()}`);
  });

  it('a code that is not five letters or digits says the real rule', async () => {
    const r = await run(['cpt', 'G020'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('A code is five letters or digits');
    expect(r.stderr).toContain('G0202 (HCPCS Level II)');
    expect(fx.apiRequests()).toHaveLength(0);
  });
});

describe('cpt', () => {
  beforeEach(() => fx.reset());

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
