import type { Icd10Code } from '../../api/types.js';
import { paginated } from '../pagination.js';
import { route } from '../router.js';

export const routes = [
  route('GET', '/api/v2/modalities', (_c, s) => ({ status: 200, body: s.data.modalities })),

  route('GET', '/api/v2/body_parts', (c, { data }) => {
    const modality = c.url.searchParams.get('modality');
    if (!modality) return { status: 200, body: data.bodyParts };
    const m = data.modalities.find(
      (x) =>
        x.id === modality ||
        x.name.toLowerCase() === modality.toLowerCase() ||
        x.slug === modality.toLowerCase(),
    );
    if (!m) return { status: 200, body: [] };
    return {
      status: 200,
      body: data.bodyParts.filter((b) => data.bodyPartModalities.get(b.name)?.includes(m.name)),
    };
  }),

  route('GET', '/api/v2/cpt_codes', (c, { data }) => {
    const code = c.url.searchParams.get('code');
    if (!code) return { status: 400, body: { error: 'param is missing or the value is empty: code' } };
    return { status: 200, body: data.cpt.filter((m) => m.code === code.trim().toUpperCase()) };
  }),

  route('GET', '/api/v2/icd10_codes', (c, { data }) => {
    // Every word of the query, anywhere, in any order, as a search box would.
    const words = (c.url.searchParams.get('q') ?? '').trim().toLowerCase().split(/\s+/).filter(Boolean);
    const ids = [...c.url.searchParams.getAll('ids[]'), ...c.url.searchParams.getAll('ids')];
    const wanted = data.icd10.filter((x) => ids.includes(x.id));
    const matches = data.icd10.filter(
      (x) =>
        !ids.includes(x.id) &&
        words.every((w) => x.code.toLowerCase().includes(w) || x.short_description.toLowerCase().includes(w)),
    );
    return { status: 200, body: paginated<Icd10Code>('icd10_codes', [...wanted, ...matches], c.url) };
  }),
];
