import type { Referral } from '../../api/types.js';
import { uuidFrom } from '../data/random.js';
import {
  checkReferences,
  createdReferral,
  referralFields,
  type Sources,
  updatedReferral,
} from '../data/referral-input.js';
import { pageOf } from '../pagination.js';
import { blank, invalid, jsonBody, notFound } from '../reply.js';
import { route } from '../router.js';
import type { EmulatorState } from '../types.js';
import { searchMatcher } from './referral-search.js';

export const routes = [
  route('GET', '/api/v2/referrals', (c, s) => {
    const { referrals, options } = s;
    const status = c.url.searchParams.get('status');
    const lob = c.url.searchParams.get('line_of_business');
    const q = options.ignoreSearch ? null : c.url.searchParams.get('q');
    const found = q ? searchMatcher(q) : undefined;
    if (status || lob || found) {
      const all: Referral[] = [];
      for (let i = 0; i < referrals.total; i++) {
        const r = referrals.at(i);
        if ((!status || r.status === status) && (!lob || r.line_of_business === lob) && (!found || found(r)))
          all.push(r);
      }
      const { page, perPage, meta } = pageOf(c.url, all.length);
      const items = all.slice((page - 1) * perPage, page * perPage);
      return { status: 200, body: options.referralListShape === 'bare' ? items : { referrals: items, meta } };
    }
    const { page, perPage, meta } = pageOf(c.url, referrals.total);
    const [head, tail] =
      options.referralListShape === 'bare'
        ? ['[', ']']
        : ['{"referrals":[', `],"meta":${JSON.stringify(meta)}}`];
    const raw = referrals.pageBody((page - 1) * perPage, page * perPage, head, tail);
    return { status: 200, raw, headers: { 'content-type': 'application/json; charset=utf-8' } };
  }),

  route('GET', '/api/v2/referrals/:id', (c, s) => {
    const r = s.referrals.get(c.params.id!);
    return r ? { status: 200, body: r } : notFound(c, 'Referral');
  }),

  route('POST', '/api/v2/referrals', (c, s) => {
    const { referrals } = s;
    const inner = referralFields(jsonBody(c));
    if (!inner) return invalid(c, ['Body must be a JSON object']);
    const errors: string[] = [];
    const patient = inner.patient as Record<string, unknown> | undefined;
    if (typeof patient !== 'object' || patient === null) errors.push("Patient can't be blank");
    else {
      if (blank(patient.first_name)) errors.push("Patient first name can't be blank");
      if (blank(patient.last_name)) errors.push("Patient last name can't be blank");
    }
    const lob = inner.line_of_business;
    if (lob !== undefined && !['personal_injury', 'workers_comp', 'health_plan'].includes(String(lob)))
      errors.push(`Line of business ${String(lob)} cannot be selected on referral creation`);
    if (errors.length === 0) errors.push(...checkReferences(inner, sources(s)));
    if (errors.length > 0) return invalid(c, errors);
    const reference = `R-${String(900000 + referrals.total).padStart(6, '0')}`;
    const created = createdReferral(inner, uuidFrom(s.idRand), reference, sources(s));
    referrals.add(created);
    return { status: 201, body: created };
  }),

  // The spec names the referral update without its method or path: PATCH is a guess, PUT answers the same.
  ...['PATCH', 'PUT'].map((method) =>
    route(method, '/api/v2/referrals/:id', (c, s) => {
      const r = s.referrals.get(c.params.id!);
      if (!r) return notFound(c, 'Referral');
      const fields = referralFields(jsonBody(c));
      if (!fields) return invalid(c, ['Body must be a JSON object']);
      const updated = updatedReferral(r, fields, sources(s));
      if (Array.isArray(updated)) return invalid(c, updated);
      s.referrals.put(updated);
      return { status: 200, body: updated };
    }),
  ),
];

function sources(s: EmulatorState): Sources {
  return { ref: s.data, lawFirms: s.lawFirms, newId: () => uuidFrom(s.idRand) };
}
