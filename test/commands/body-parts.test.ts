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
    expect(fx.apiRequests().map((q) => q.path)).toEqual([
      '/api/v2/modalities',
      '/api/v2/body_parts?modality=Ultrasound',
    ]);
  });

  it('a name is taken whatever its case, spaces and hyphens, and sent as the API names it', async () => {
    for (const typed of ['xray', 'X RAY', 'x-ray']) {
      fx.reset();
      const r = await run(['body-parts', '--modality', typed, '--no-cache', '--json'], { env: fx.env() });
      expect(r.code, typed).toBe(0);
      expect(fx.apiRequests().at(-1)!.path).toBe('/api/v2/body_parts?modality=X-Ray');
    }
  });

  it('a modality that is none (a name or an id) is exit 2 with a suggestion and the list, and no body parts are asked for', async () => {
    const typo = await run(['body-parts', '--modality', 'mir'], { env: fx.env() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('error: --modality: no modality is named "mir"');
    expect(typo.stderr).toMatch(/hint: Did you mean MRI\? The modalities: MRI, CT, /);
    const none = await run(['body-parts', '--modality', 'Telepathy'], { env: fx.env() });
    expect(none.code).toBe(2);
    expect(none.stderr).not.toContain('Did you mean');
    const id = await run(['body-parts', '--modality', '0D9E4C1B-8A7F-4E2D-9C3B-1A2B3C4D5E6F'], {
      env: fx.env(),
    });
    expect(id.code).toBe(2);
    expect(id.stderr).toContain(
      'error: --modality: no modality has the id 0d9e4c1b-8a7f-4e2d-9c3b-1a2b3c4d5e6f',
    );
    expect(fx.apiRequests().filter((q) => q.path.startsWith('/api/v2/body_parts'))).toEqual([]);
  });
});
