import type { LawFirm } from '../../api/types.js';
import { uuidFrom } from '../data/random.js';
import { paginated } from '../pagination.js';
import { gate, invalid, jsonBody } from '../reply.js';
import { route } from '../router.js';

export const routes = [
  route('GET', '/api/v2/law_firms', (c, s) => {
    gate(c, 'law firm search');
    const q = c.url.searchParams.get('q');
    if (q === null || q.trim() === '') return invalid(c, ["q can't be blank"], 'q is required');
    const needle = q.trim().toLowerCase();
    const hits = s.lawFirms.filter((f) =>
      [f.name, f.city, f.state, f.zipcode].some((v) => v.toLowerCase().includes(needle)),
    );
    return { status: 200, body: paginated('law_firms', hits, c.url) };
  }),

  route('POST', '/api/v2/law_firms', (c, s) => {
    gate(c, 'law firm creation');
    const body = jsonBody(c);
    const firm = (body as { law_firm?: unknown } | undefined)?.law_firm;
    if (typeof firm !== 'object' || firm === null)
      return invalid(c, ["law_firm can't be blank"], 'law_firm is required');
    const f = firm as Record<string, unknown>;
    const errors: string[] = [];
    const text = (k: string) => (typeof f[k] === 'string' ? (f[k] as string).trim() : '');
    if (!text('name')) errors.push("Name can't be blank");
    if (!text('city')) errors.push("City can't be blank");
    if (!text('state')) errors.push("State can't be blank");
    else if (!/^[A-Za-z]{2}$/.test(text('state'))) errors.push('State must be a two-letter abbreviation');
    if (text('zipcode') && !/^\d{5}(-\d{4})?$/.test(text('zipcode'))) errors.push('Zipcode is invalid');
    const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
    if (s.lawFirms.some((x) => same(x.name, text('name')) && same(x.city, text('city'))))
      errors.push('Name has already been taken in this city');
    if (errors.length > 0) return invalid(c, errors);
    const created: LawFirm = {
      id: uuidFrom(s.idRand),
      name: text('name'),
      address_line_1: text('address_line_1'),
      address_line_2: text('address_line_2') || null,
      city: text('city'),
      state: text('state').toUpperCase(),
      zipcode: text('zipcode'),
    };
    s.lawFirms.push(created);
    return { status: 201, body: { law_firm: created } };
  }),
];
