import type { Procedure, Referral, Visit } from '../api/types.js';
import { VISIT_STATUSES } from '../api/types.js';
import { checkReferralStructure } from '../referrals/check.js';

/**
 * The export's flat rows: one per referral, visit or procedure, with a stable, documented column
 * set (README "Export columns"). Changing a column is a breaking change for users' spreadsheets.
 */

export type RowKind = 'referral' | 'visit' | 'procedure';
/** A list column (`cpt_codes`, `accession_ids`) is an array: JSON keeps it, CSV joins it with `; `. */
export type Row = Record<string, string | number | boolean | null | string[]>;

type R = Partial<Referral> & Record<string, unknown>;
type V = Partial<Visit> & Record<string, unknown>;
type P = Partial<Procedure> & Record<string, unknown>;

const RANK = new Map<string, number>(VISIT_STATUSES.map((s, i) => [s, i]));
RANK.set('canceled', -1);

/**
 * The most advanced visit status of a referral: furthest along the spec's list, canceled counting
 * least; a status the tool does not know is shown as it is when nothing known is further along.
 */
export function latestVisitStatus(visits: readonly { status?: unknown }[] | undefined): string | null {
  let best: string | null = null;
  let bestRank = Number.NEGATIVE_INFINITY;
  for (const v of Array.isArray(visits) ? visits : []) {
    if (typeof v?.status !== 'string') continue;
    const rank = RANK.get(v.status) ?? -0.5; // unknown: above canceled, below any known progress
    if (rank > bestRank) {
      best = v.status;
      bestRank = rank;
    }
  }
  return best;
}

// A nested value where a column wants text is kept as its JSON, not "[object Object]".
const str = (v: unknown): string | null =>
  v === undefined || v === null
    ? null
    : typeof v === 'string'
      ? v
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const joined = (xs: unknown[]): string | null => {
  const vals = xs.filter((x) => x !== null && x !== undefined && x !== '').map(String);
  return vals.length > 0 ? vals.join('; ') : null;
};

/** The values of a list column, as text, blanks left out (CSV joins them with `; `). */
const texts = (xs: unknown[]): string[] =>
  xs.filter((x) => x !== null && x !== undefined && x !== '').map((x) => str(x) as string);

/** A cell as CSV writes it: a list joined with `; ` (empty: an empty cell), anything else as it is. */
export function csvValue(v: Row[string] | undefined): string | number | boolean | null {
  if (!Array.isArray(v)) return v ?? null;
  return v.length > 0 ? v.join('; ') : null;
}

/** Patient date of birth as YYYY-MM-DD: date_of_birth_iso, else the deprecated MM/DD/YYYY converted. */
export function patientDob(patient: Record<string, unknown>): string | null {
  const iso = str(patient.date_of_birth_iso);
  if (iso) return iso;
  const legacy = str(patient.date_of_birth);
  const m = legacy ? /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(legacy) : null;
  return m ? `${m[3]}-${m[1]}-${m[2]}` : legacy;
}

function referralColumns(r: R): Row {
  const patient = obj(r.patient);
  const lawFirm = obj(r.law_firm);
  const practice = obj(r.practice);
  const payor = obj(r.payor);
  const provider = obj(r.provider);
  const visits = list<V>(r.visits);
  const auto = obj(r.auto_book_request);
  return {
    referral_id: str(r.id),
    reference: str(r.reference),
    referral_status: str(r.status),
    line_of_business: str(r.line_of_business),
    payment_type: str(r.payment_type),
    incident_state: str(r.incident_state),
    patient_id: str(patient.id),
    patient_first_name: str(patient.first_name),
    patient_last_name: str(patient.last_name),
    patient_date_of_birth: patientDob(patient),
    law_firm_id: str(lawFirm.id),
    law_firm_name: str(lawFirm.name),
    practice_id: str(practice.id),
    practice_name: str(practice.name),
    payor_id: str(payor.id),
    payor_name: str(payor.name),
    insurance_number: str(r.insurance_number),
    wc_number: str(r.wc_number),
    referring_provider: str(r.referring_provider),
    provider_name: str(provider.name),
    provider_npi: str(provider.npi),
    scheduling_mode: str(r.scheduling_mode),
    icd10_codes: joined(list<Record<string, unknown>>(r.icd10_codes).map((c) => c.code)),
    visit_count: visits.length,
    latest_visit_status: latestVisitStatus(visits),
    auto_book_status: str(auto.status),
    auto_book_outcome: str(auto.outcome),
  };
}

/** Context every visit and procedure row repeats, so each row stands alone in a spreadsheet. */
function referralContext(r: R): Row {
  const patient = obj(r.patient);
  return {
    referral_id: str(r.id),
    reference: str(r.reference),
    referral_status: str(r.status),
    line_of_business: str(r.line_of_business),
    patient_first_name: str(patient.first_name),
    patient_last_name: str(patient.last_name),
    patient_date_of_birth: patientDob(patient),
    law_firm_name: str(obj(r.law_firm).name),
    payor_name: str(obj(r.payor).name),
  };
}

function visitColumns(v: V | undefined): Row {
  const loc = obj(v?.location);
  const procedures = list<P>(v?.procedures);
  return {
    visit_id: str(v?.id),
    modality: str(v?.modality),
    visit_status: str(v?.status),
    start_time: str(v?.start_time),
    location_id: str(loc.id),
    location_name: str(loc.name),
    location_address_line_1: str(loc.address_line_1),
    location_address_line_2: str(loc.address_line_2),
    location_city: str(loc.city),
    location_state: str(loc.state),
    location_zip_code: str(loc.zip_code),
    location_npi: str(loc.npi),
    radiologist_group_name: str(v?.radiologist_group_name),
    procedure_count: v ? procedures.length : null,
    cpt_codes: v ? texts(procedures.map((p) => p.cpt_code)) : null,
    accession_ids: v ? texts(procedures.map((p) => p.accession_id)) : null,
  };
}

function procedureColumns(p: P | undefined, index: number | null): Row {
  return {
    procedure_index: index,
    body_part: str(p?.body_part),
    procedure: str(p?.procedure),
    contrast: str(p?.contrast),
    laterality: str(p?.laterality),
    cpt_code: str(p?.cpt_code),
    cpt_code_id: str(p?.cpt_code_id),
    cpt_system: str(p?.cpt_system),
    accession_id: str(p?.accession_id),
    study_uid: str(p?.study_uid),
    series_uid: str(p?.series_uid),
    report_link: str(p?.report_link),
    image_link: str(p?.image_link),
  };
}

const sampleVisit = visitColumns(undefined);
const sampleProcedure = procedureColumns(undefined, null);

export const COLUMNS: Record<RowKind, readonly string[]> = {
  referral: Object.keys(referralColumns({})),
  visit: [...Object.keys(referralContext({})), ...Object.keys(sampleVisit)],
  procedure: [
    ...Object.keys(referralContext({})),
    'visit_id',
    'modality',
    'visit_status',
    'start_time',
    'location_name',
    'location_city',
    'location_state',
    ...Object.keys(sampleProcedure),
  ],
};

/**
 * The rows of one referral. A referral with no (matching) visits still gives one visit row, and
 * a visit with no procedures one procedure row, with those columns empty: no referral is lost.
 * `visitFilter` keeps only visits with those statuses; a referral with none is left out.
 */
export function rowsOf(referral: unknown, kind: RowKind, visitFilter?: ReadonlySet<string>): Row[] {
  // A list that is not a list would silently lose visits: stop with where instead.
  const id = typeof obj(referral).id === 'string' ? (obj(referral).id as string) : '';
  const r = checkReferralStructure(
    referral,
    /^[0-9a-f-]{36}$/i.test(id) ? `referral ${id}` : 'a referral',
  ) as R;
  const allVisits = list<V>(r.visits);
  const visits = visitFilter
    ? allVisits.filter((v) => typeof v.status === 'string' && visitFilter.has(v.status))
    : allVisits;
  if (visitFilter && visits.length === 0) return [];
  // Already exactly COLUMNS.referral, in order, none undefined (COLUMNS.referral is its keys).
  if (kind === 'referral') return [referralColumns(r)];
  const ctx = referralContext(r);
  const rows: Row[] = [];
  const vs: Array<V | undefined> = visits.length > 0 ? visits : [undefined];
  for (const v of vs) {
    const vc = visitColumns(v);
    if (kind === 'visit') {
      rows.push(pickColumns({ ...ctx, ...vc }, COLUMNS.visit));
      continue;
    }
    const procs = list<P>(v?.procedures);
    const ps: Array<P | undefined> = procs.length > 0 ? procs : [undefined];
    ps.forEach((p, i) => {
      rows.push(pickColumns({ ...ctx, ...vc, ...procedureColumns(p, p ? i + 1 : null) }, COLUMNS.procedure));
    });
  }
  return rows;
}

function pickColumns(row: Row, columns: readonly string[]): Row {
  const out: Row = {};
  for (const c of columns) out[c] = row[c] ?? null;
  return out;
}

/** Whether a referral has a visit with one of these statuses (for JSON exports with --visit-status). */
export function hasVisitIn(referral: unknown, statuses: ReadonlySet<string>): boolean {
  return list<V>(obj(referral).visits).some((v) => typeof v.status === 'string' && statuses.has(v.status));
}
