import { defineResource } from './schema.js';

/**
 * One document a referral carries: a procedure's report or images, or an entry of its `documents`. Links are
 * kept without their query string (a signed link is a credential): `signed` says one was taken off.
 */
export interface DocumentRow {
  reference: string | null;
  referral_id: string | null;
  /** `report` and `images`: a procedure's links; `document`: an entry of the referral's `documents`. */
  kind: 'report' | 'images' | 'document';
  /** A `documents` entry's place in the list, from 1; null for a procedure's links. */
  document_index: number | null;
  visit_id: string | null;
  modality: string | null;
  visit_status: string | null;
  accession_id: string | null;
  cpt_code: string | null;
  body_part: string | null;
  /** `yes` when there is a link; a report not in yet is `no`. */
  available: 'yes' | 'no';
  link: string | null;
  signed: 'yes' | 'no';
  /** A `documents` entry's own fields (free-form) but its link, links in it bare too; null for a procedure. */
  document: Record<string, unknown> | null;
}

/** How a row reads in a table's link column: the link, or why there is none yet. */
export function linkCell(r: DocumentRow): string {
  // A link shown without its signature does not open on its own: `referrals download` fetches it.
  if (r.link) return r.signed === 'yes' ? `${r.link} (signed)` : r.link;
  if (r.kind === 'document') return 'no link';
  const visit = r.visit_status ?? 'unknown';
  return visit === 'canceled' || visit === 'exam_not_completed'
    ? `none (visit: ${visit})`
    : `not yet (visit: ${visit})`;
}

/** A `documents` entry's fields but its link, as `name: value` pairs. */
export function documentFields(r: DocumentRow): string | null {
  if (!r.document) return null;
  const pairs = Object.entries(r.document).map(
    ([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`,
  );
  return pairs.length > 0 ? pairs.join('; ') : null;
}

// At a narrow terminal the link and what it is stay; the visit and codes give way first, the document's
// other fields last but one. A link wraps rather than being left out.
export const DOCUMENTS = defineResource<DocumentRow>(
  {
    reference: true,
    referral_id: true,
    kind: true,
    document_index: true,
    visit_id: true,
    modality: true,
    visit_status: true,
    accession_id: true,
    cpt_code: true,
    body_part: true,
    available: true,
    link: true,
    signed: true,
    // Free-form: its fields are the entry's own, shown as document.<name> (CSV columns, --fields +document.x).
    document: {},
  },
  [
    { header: 'Kind', field: 'kind', priority: 1, fit: 'keep' },
    { header: 'Accession', field: 'accession_id', priority: 4, fit: 'keep' },
    { header: 'CPT', field: 'cpt_code', priority: 6, fit: 'keep' },
    { header: 'Body part', field: 'body_part', priority: 7, min: 10 },
    { header: 'Visit status', field: 'visit_status', priority: 5, fit: 'keep' },
    { header: 'Link', get: linkCell, reads: ['link'], priority: 2, min: 34 },
    { header: 'Details', get: documentFields, priority: 3, min: 12 },
  ],
);
