import type { CptMapping } from '../api/types.js';

// What the guided `referrals create` collects, and the payload it makes of it. The create payload is
// not published: the shape is the example in docs/recipes.md (`{ referral: { …, visits: [{ modality,
// procedures: [{ cpt_code_id }] }] } }`), a guess that `--file` can always replace.

/** Lines of business a referral can be created with (the spec: never patient_direct). */
export const CREATE_LINES_OF_BUSINESS = ['personal_injury', 'workers_comp', 'health_plan'] as const;

/** The read side's payment types, less the legacy `funding` (new referrals use `funded`). */
export const CREATE_PAYMENT_TYPES = [
  'lien',
  'insurance',
  'med_pay',
  'pip',
  'cash_pay',
  'funded',
  'servicing',
  'outside_servicing',
] as const;

export const SCHEDULING_MODES = [
  'anytime_anywhere',
  'time_preferences',
  'existing_appointment',
  'needs_other_location',
] as const;

export interface NewPatient {
  first_name: string;
  last_name: string;
  /** YYYY-MM-DD */
  date_of_birth_iso: string;
  phone_number?: string | undefined;
  email?: string | undefined;
}

export interface NewExam {
  modality: string;
  mapping: Pick<CptMapping, 'id' | 'code' | 'body_part_name' | 'laterality' | 'contrast'>;
}

export interface NewReferral {
  patient: NewPatient;
  lineOfBusiness: string;
  paymentType: string;
  incidentState: string;
  exams: NewExam[];
  icd10Ids: string[];
  lawFirmId?: string | undefined;
  schedulingMode?: string | undefined;
  preferredLocationId?: string | undefined;
}

/** The payload: exams of one modality share a visit, in the order they were given; empty answers left out. */
export function referralPayload(r: NewReferral): { referral: Record<string, unknown> } {
  const visits = new Map<string, Array<{ cpt_code_id: string }>>();
  for (const exam of r.exams) {
    const procedures = visits.get(exam.modality) ?? [];
    procedures.push({ cpt_code_id: exam.mapping.id });
    visits.set(exam.modality, procedures);
  }
  const patient: Record<string, string> = {
    first_name: r.patient.first_name,
    last_name: r.patient.last_name,
    date_of_birth_iso: r.patient.date_of_birth_iso,
  };
  if (r.patient.phone_number) patient.phone_number = r.patient.phone_number;
  if (r.patient.email) patient.email = r.patient.email;
  const referral: Record<string, unknown> = {
    line_of_business: r.lineOfBusiness,
    payment_type: r.paymentType,
    incident_state: r.incidentState,
    patient,
    visits: [...visits].map(([modality, procedures]) => ({ modality, procedures })),
  };
  if (r.icd10Ids.length > 0) referral.icd10_code_ids = [...new Set(r.icd10Ids)];
  if (r.lawFirmId) referral.law_firm_id = r.lawFirmId;
  if (r.schedulingMode) referral.scheduling_mode = r.schedulingMode;
  if (r.preferredLocationId) referral.preferred_location_id = r.preferredLocationId;
  return { referral };
}

/** The payment type a line of business usually takes (the service returns workers' comp as insurance). */
export function defaultPaymentType(lineOfBusiness: string): string {
  return lineOfBusiness === 'personal_injury' ? 'lien' : 'insurance';
}

/** A date of birth as typed (YYYY-MM-DD or MM/DD/YYYY) as YYYY-MM-DD; an error message when it is none. */
export function isoDateOfBirth(typed: string, today = new Date()): { iso: string } | { error: string } {
  const t = typed.trim();
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  const us = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(t);
  const parts = iso
    ? [Number(iso[1]), Number(iso[2]), Number(iso[3])]
    : us
      ? [Number(us[3]), Number(us[1]), Number(us[2])]
      : undefined;
  if (!parts) return { error: 'a date as YYYY-MM-DD or MM/DD/YYYY' };
  const [y, m, d] = parts as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d)
    return { error: `there is no such date: ${t}` };
  if (date.getTime() > today.getTime()) return { error: 'a date of birth cannot be in the future' };
  if (y < 1900) return { error: 'a date of birth after 1900' };
  return { iso: date.toISOString().slice(0, 10) };
}

/** "MRI Knee, left, without contrast (73721)": a mapping as a choice. */
export function mappingLabel(
  m: NewExam['mapping'] & { number_of_views?: number | null | undefined },
): string {
  const side = m.laterality && m.laterality !== 'not_present' ? `, ${m.laterality}` : '';
  const views = m.number_of_views ? `, ${m.number_of_views} views` : '';
  return `${m.body_part_name}${side}, ${String(m.contrast).replace(/_/g, ' ')}${views} (${m.code})`;
}

/** The referral's patient as `referrals find` takes it: "last, first". */
export function findText(payload: unknown): string | undefined {
  const body = payload as { referral?: { patient?: unknown }; patient?: unknown } | null;
  const p = (body?.referral?.patient ?? body?.patient) as { first_name?: unknown; last_name?: unknown };
  if (typeof p?.last_name !== 'string' || p.last_name.trim() === '') return undefined;
  const first = typeof p.first_name === 'string' ? p.first_name.trim() : '';
  return first ? `${p.last_name.trim()}, ${first}` : p.last_name.trim();
}
