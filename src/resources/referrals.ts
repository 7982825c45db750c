import type { Referral } from '../api/types.js';
import { visitRank } from '../referrals/progress.js';
import { defineResource, list, obj, REPEATED, type RowColumn, rowNames, str } from './schema.js';
import { PROCEDURE_ROW, type V, VISIT_ROW } from './visits.js';

/**
 * The status of the referral's most advanced visit, ranked by the progress rule (referrals/progress.ts):
 * exam_not_completed never above complete, canceled below every progress status, an unknown status only when
 * nothing known is further. The first of equals wins.
 */
export function mostAdvancedVisit(visits: readonly { status?: unknown }[] | undefined): string | null {
  let best: string | null = null;
  let bestRank = Number.NEGATIVE_INFINITY;
  for (const v of Array.isArray(visits) ? visits : []) {
    if (typeof v?.status !== 'string') continue;
    const rank = visitRank(v.status);
    if (rank > bestRank) {
      best = v.status;
      bestRank = rank;
    }
  }
  return best;
}

/** Patient date of birth as YYYY-MM-DD: date_of_birth_iso, else the deprecated MM/DD/YYYY converted. */
export function patientDob(patient: Record<string, unknown>): string | null {
  const iso = str(patient.date_of_birth_iso);
  if (iso) return iso;
  const legacy = str(patient.date_of_birth);
  const m = legacy ? /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(legacy) : null;
  return m ? `${m[3]}-${m[1]}-${m[2]}` : legacy;
}

/** The patient as tables show it: "last, first", or the name the API sent (deprecated there). */
export const patientName = (r: Referral) => {
  const p = r.patient;
  if (!p) return null;
  if (p.last_name || p.first_name) return [p.last_name, p.first_name].filter(Boolean).join(', ');
  return p.name ?? null;
};

const ID_NAME = { id: true, name: true } as const;

/**
 * Fields a referral list computes from each record: named by --fields, written by the table, CSV and
 * workbook after the documented ones (their columns stay put); JSON and NDJSON are the records as sent.
 */
export const REFERRAL_COMPUTED: Readonly<Record<string, (record: unknown) => unknown>> = {
  most_advanced_visit: (r) => mostAdvancedVisit(list<V>(obj(r).visits)),
};

export const { fields: REFERRAL_FIELDS, columns: referralColumns } = defineResource<Referral>(
  {
    id: true,
    reference: true,
    status: true,
    line_of_business: true,
    payment_type: true,
    incident_state: true,
    visits: true,
    referring_provider: true,
    provider: { id: true, name: true, npi: true },
    law_firm: ID_NAME,
    practice: ID_NAME,
    payor: ID_NAME,
    insurance_number: true,
    wc_number: true,
    icd10_codes: true,
    patient: {
      id: true,
      identifier: { system: true, value: true },
      name: true,
      first_name: true,
      last_name: true,
      middle_initial: true,
      date_of_birth: true,
      date_of_birth_iso: true,
      email: true,
      phone_number: true,
      gender: true,
      address_line_1: true,
      address_line_2: true,
      city: true,
      state: true,
      zip_code: true,
    },
    call_notes: true,
    documents: true,
    answered_medical_questionnaire: true,
    preferred_location: ID_NAME,
    scheduling_mode: true,
    auto_book_request: {
      id: true,
      status: true,
      strategy: true,
      radius: true,
      address: true,
      outcome: true,
      error: true,
      completed_at: true,
    },
  },
  // At a narrow terminal the reference (every command takes it), patient, status and the visit's progress
  // stay; the 36-character id goes first (--wide and every data format keep it), then the least read columns.
  [
    { header: 'Reference', field: 'reference', priority: 1, fit: 'keep' },
    { header: 'Status', field: 'status', priority: 3, fit: 'keep' },
    { header: 'Line of business', field: 'line_of_business', priority: 6, fit: 'keep' },
    { header: 'Patient', get: patientName, priority: 2, min: 18 },
    {
      header: 'Visits',
      get: (r) => (Array.isArray(r.visits) ? r.visits.length : null),
      priority: 5,
      fit: 'keep',
    },
    { header: 'Most advanced visit', get: REFERRAL_COMPUTED.most_advanced_visit!, priority: 4, fit: 'keep' },
    { header: 'ID', field: 'id', priority: 7, fit: 'keep' },
  ],
);

/** The fields `referrals list` and `find` take: the documented ones, then the computed. */
export const REFERRAL_LIST_FIELDS: readonly string[] = [
  ...REFERRAL_FIELDS,
  ...Object.keys(REFERRAL_COMPUTED),
];

export type R = Partial<Referral> & Record<string, unknown>;

const joined = (xs: unknown[]): string | null => {
  const vals = xs.filter((x) => x !== null && x !== undefined && x !== '').map(String);
  return vals.length > 0 ? vals.join('; ') : null;
};
const patient = (r: R) => obj(r.patient);

// Changing a column breaks users' spreadsheets (README "Export columns").
export const REFERRAL_ROW: readonly RowColumn<R>[] = [
  ['referral_id', (r) => str(r.id), REPEATED],
  ['reference', (r) => str(r.reference), REPEATED],
  ['referral_status', (r) => str(r.status), REPEATED],
  ['line_of_business', (r) => str(r.line_of_business), REPEATED],
  ['payment_type', (r) => str(r.payment_type)],
  ['incident_state', (r) => str(r.incident_state)],
  ['patient_id', (r) => str(patient(r).id)],
  ['patient_first_name', (r) => str(patient(r).first_name), REPEATED],
  ['patient_last_name', (r) => str(patient(r).last_name), REPEATED],
  ['patient_date_of_birth', (r) => patientDob(patient(r)), REPEATED],
  ['law_firm_id', (r) => str(obj(r.law_firm).id)],
  ['law_firm_name', (r) => str(obj(r.law_firm).name), REPEATED],
  ['practice_id', (r) => str(obj(r.practice).id)],
  ['practice_name', (r) => str(obj(r.practice).name)],
  ['payor_id', (r) => str(obj(r.payor).id)],
  ['payor_name', (r) => str(obj(r.payor).name), REPEATED],
  ['insurance_number', (r) => str(r.insurance_number)],
  ['wc_number', (r) => str(r.wc_number)],
  ['referring_provider', (r) => str(r.referring_provider)],
  ['provider_name', (r) => str(obj(r.provider).name)],
  ['provider_npi', (r) => str(obj(r.provider).npi)],
  ['scheduling_mode', (r) => str(r.scheduling_mode)],
  ['icd10_codes', (r) => joined(list<Record<string, unknown>>(r.icd10_codes).map((c) => c.code))],
  ['visit_count', (r) => list(r.visits).length],
  ['most_advanced_visit', (r) => mostAdvancedVisit(list<V>(r.visits))],
  ['auto_book_status', (r) => str(obj(r.auto_book_request).status)],
  ['auto_book_outcome', (r) => str(obj(r.auto_book_request).outcome)],
];

/** Export columns renamed: the old name, still taken by --fields for now, and the new. */
export const RENAMED_COLUMNS: Readonly<Record<string, string>> = {
  latest_visit_status: 'most_advanced_visit',
};

/** The export's columns of each row kind, in order: a visit or procedure row repeats its parents' context. */
export const EXPORT_COLUMNS = {
  referral: rowNames(REFERRAL_ROW),
  visit: [...rowNames(REFERRAL_ROW, true), ...rowNames(VISIT_ROW)],
  procedure: [...rowNames(REFERRAL_ROW, true), ...rowNames(VISIT_ROW, true), ...rowNames(PROCEDURE_ROW)],
};
