import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectTableForms, expectUsageError, piped } from '../fake-io.js';
import { mockFixture, run } from '../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

const NAMES = ['MRI', 'CT', 'X-Ray', 'Ultrasound', 'Arthrogram', 'EMG/NCV', 'PET/CT', 'DEXA'];

describe('imaging modalities', () => {
  it('lists every modality as a table on a terminal and when piped', async () => {
    const forms = await bothForms(['modalities'], { env: fx.env() });
    expectTableForms(forms, ['NAME', 'SLUG', 'ID'], NAMES);
    expect(forms.terminal.stderr).toBe('');
    expect(forms.piped.stderr).toBe('');
    expect(fx.apiRequests().map((r) => r.path)).toEqual(['/api/v2/modalities', '/api/v2/modalities']);
  });

  it('prints the same records as JSON, NDJSON and CSV', async () => {
    const json = JSON.parse((await piped(['modalities', '--json'], { env: fx.env() })).stdout);
    expect(json.map((m: { name: string }) => m.name)).toEqual(NAMES);
    const nd = await piped(['modalities', '--format', 'ndjson'], { env: fx.env() });
    expect(
      nd.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(json);
    const csv = await piped(['modalities', '--format', 'csv'], { env: fx.env() });
    const rows = csv.stdout.split('\r\n');
    expect(rows[0]).toBe('id,name,slug');
    expect(rows[1]).toBe(`${json[0].id},MRI,mri`);
    expect(rows).toHaveLength(NAMES.length + 2);
  });

  it('takes no argument and refuses an unknown format before any request', async () => {
    expectUsageError(
      await piped(['modalities', 'mri'], { env: fx.env() }),
      /argument/,
      fx.apiRequests().length,
    );
    expectUsageError(
      await piped(['modalities', '--format', 'xml'], { env: fx.env() }),
      /xml/,
      fx.apiRequests().length,
    );
  });
});

describe('modalities', () => {
  beforeEach(() => fx.reset());

  it('lists modalities', async () => {
    const r = await run(['modalities'], { env: fx.env() });
    expect(r.stdout).toMatch(/^NAME\s+SLUG\s+ID/);
    expect(r.stdout).toContain('MRI');
  });
});
