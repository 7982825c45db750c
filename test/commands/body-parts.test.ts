import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectTableForms, expectUsageError, piped, plain } from '../fake-io.js';
import { mockFixture, run } from '../helpers.js';

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('imaging body-parts', () => {
  it('lists body parts: every column when piped, the slug left out (and said so) at 80 columns', async () => {
    const json = JSON.parse((await piped(['body-parts', '--json'], { env: fx.env() })).stdout);
    const names = json.map((b: { name: string }) => b.name);
    expect(names).toContain('Knee');
    const forms = await bothForms(['body-parts'], { env: fx.env() });
    expectTableForms(forms, ['NAME', 'SLUG', 'LATERALITY', 'ID'], names);
    expect(forms.piped.stderr).toBe('');
    expect(plain(forms.terminal.stdout)).not.toContain('SLUG');
    expect(forms.terminal.stderr).toBe('Left out: Slug (--wide shows all)\n');
    expect(plain(forms.terminal.stdout)).toMatch(/^Knee +yes +/m);
    expect(forms.piped.stdout).toMatch(/^Knee +knee +yes +[0-9a-f-]{36}$/m);
  });

  it('narrows to the body parts of one modality, by name', async () => {
    const all = JSON.parse((await piped(['body-parts', '--json'], { env: fx.env() })).stdout);
    const dexa = JSON.parse(
      (await piped(['body-parts', '--modality', 'DEXA', '--json'], { env: fx.env() })).stdout,
    );
    expect(dexa.length).toBeGreaterThan(0);
    expect(dexa.length).toBeLessThan(all.length);
  });

  it('refuses an empty --modality before any request', async () => {
    expectUsageError(
      await piped(['body-parts', '--modality', ''], { env: fx.env() }),
      /--modality needs a name or an id/,
      fx.apiRequests().length,
    );
  });
});

describe('body parts by modality name', () => {
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
