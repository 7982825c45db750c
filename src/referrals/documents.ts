import type { Referral } from '../api/types.js';
import type { DocumentRow } from '../resources/documents.js';
import { list, obj, str } from '../resources/schema.js';
import { bareLink, bareLinksIn, isLink } from '../util/link.js';

// The names a free-form `documents` entry is looked up by for its link, in order; then any http(s) value.
const LINK_KEYS = ['url', 'link', 'href', 'download_url', 'file_url'];

/** Its link's key in a `documents` entry, or undefined when it has none. */
function linkKey(entry: Record<string, unknown>): string | undefined {
  return LINK_KEYS.find((k) => isLink(entry[k])) ?? Object.keys(entry).find((k) => isLink(entry[k]));
}

/** A `documents` entry's link, as `referrals documents` shows it and `download --documents` fetches it. */
export function documentLink(entry: unknown): string | null {
  if (!entry || typeof entry !== 'object') return null;
  const key = linkKey(entry as Record<string, unknown>);
  return key ? ((entry as Record<string, unknown>)[key] as string) : null;
}

/** Every link in a free-form value (a field's whole value, or in its text) bare; whether one was taken off. */
function bareAll(value: unknown): { value: unknown; signed: boolean } {
  if (typeof value === 'string') {
    const b = bareLinksIn(value);
    return { value: b.url, signed: b.signed };
  }
  if (Array.isArray(value)) {
    const items = value.map(bareAll);
    return { value: items.map((i) => i.value), signed: items.some((i) => i.signed) };
  }
  if (typeof value === 'object' && value !== null) {
    // No prototype: a server key "__proto__" is a field like any other.
    const out = Object.create(null) as Record<string, unknown>;
    let signed = false;
    for (const [k, v] of Object.entries(value)) {
      const b = bareAll(v);
      out[k] = b.value;
      signed ||= b.signed;
    }
    return { value: out, signed };
  }
  return { value, signed: false };
}

const yes = (b: boolean) => (b ? 'yes' : 'no');

/**
 * The documents a referral carries, in order: for each visit's procedures, its report (whether in or not,
 * with the visit's status) and its images when linked; then each entry of `documents`.
 */
export function documentRows(r: Referral): DocumentRow[] {
  const base = { reference: str(r.reference), referral_id: str(r.id) };
  const rows: DocumentRow[] = [];
  for (const visit of list<Record<string, unknown>>(r.visits)) {
    const v = {
      visit_id: str(visit.id),
      modality: str(visit.modality),
      visit_status: str(visit.status),
    };
    for (const p of list<Record<string, unknown>>(visit.procedures)) {
      const proc = {
        accession_id: str(p.accession_id),
        cpt_code: str(p.cpt_code),
        body_part: str(p.body_part),
      };
      const links: Array<['report' | 'images', unknown]> = [
        ['report', p.report_link],
        ['images', p.image_link],
      ];
      for (const [kind, link] of links) {
        const text = typeof link === 'string' && link.trim() !== '' ? link : null;
        // A report not in yet is a row (what is awaited); images without a link are not.
        if (!text && kind === 'images') continue;
        const b = text ? bareLink(text) : null;
        rows.push({
          ...base,
          kind,
          document_index: null,
          ...v,
          ...proc,
          available: yes(b !== null),
          link: b?.url ?? null,
          signed: yes(b?.signed ?? false),
          document: null,
        });
      }
    }
  }
  list<unknown>(r.documents).forEach((entry, i) => {
    const fields =
      typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? obj(entry) : { value: entry };
    const key = linkKey(fields);
    const link = key ? bareLink(fields[key] as string) : null;
    const rest = Object.fromEntries(Object.entries(fields).filter(([k]) => k !== key));
    const others = bareAll(rest);
    rows.push({
      ...base,
      kind: 'document',
      document_index: i + 1,
      visit_id: null,
      modality: null,
      visit_status: null,
      accession_id: null,
      cpt_code: null,
      body_part: null,
      available: yes(link !== null),
      link: link?.url ?? null,
      signed: yes((link?.signed ?? false) || others.signed),
      document: others.value as Record<string, unknown>,
    });
  });
  return rows;
}
