import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectTableForms, expectUsageError, piped, plain } from '../fake-io.js';
import { mockFixture } from '../helpers.js';

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
});
