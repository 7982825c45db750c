import { expectObject, expectRecords, expectString, expectTexts, kindOf } from '../api/shape.js';
import { UnreadableAnswerError } from '../errors.js';

// The shape the referral views rely on (detail view, list table, export rows), checked before they read it,
// so a wrong shape is "an answer this tool cannot read: <where>" rather than a crash or a silently empty
// column.

const ADDRESS = ['address_line_1', 'address_line_2', 'city', 'state', 'zip_code'];

/** The structure: the referral is an object, its lists are lists of objects, its records are records. */
export function checkReferralStructure(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UnreadableAnswerError(`${where} is ${kindOf(value)}, not an object`);
  const r = value as Record<string, unknown>;
  for (const f of ['patient', 'law_firm', 'practice', 'payor', 'provider', 'auto_book_request'])
    expectObject(r[f], where, f);
  expectRecords(r.icd10_codes, where, 'icd10_codes');
  expectRecords(r.visits, where, 'visits').forEach((visit, i) => {
    const w = `${where}, visit ${i + 1}`;
    expectObject(visit.location, w, 'location');
    expectRecords(visit.procedures, w, 'procedures');
  });
  return r;
}

const TEXTS = [
  'id',
  'reference',
  'line_of_business',
  'payment_type',
  'incident_state',
  'insurance_number',
  'wc_number',
  'referring_provider',
  'scheduling_mode',
];
const PARTIES = ['law_firm', 'practice', 'payor'];
const PARTY_TEXTS = ['id', 'name'];
const PROVIDER_TEXTS = ['name', 'npi'];
const AUTO_BOOK_TEXTS = ['status', 'outcome', 'strategy', 'radius'];
const PREFERRED_TEXTS = ['name'];
const PATIENT_TEXTS = [
  'id',
  'first_name',
  'middle_initial',
  'last_name',
  'name',
  'date_of_birth',
  'date_of_birth_iso',
  'gender',
  'phone_number',
  'email',
  ...ADDRESS,
];
const VISIT_TEXTS = ['id', 'modality', 'radiologist_group_name'];
const LOCATION_TEXTS = ['id', 'name', ...ADDRESS, 'npi'];
const PROCEDURE_TEXTS = ['body_part', 'procedure', 'cpt_code', 'accession_id', 'report_link', 'image_link'];
const ICD10_TEXTS = ['code', 'short_description'];
const NOTE_TEXTS = ['notes'];

/** Everything the detail view and the list table show: the structure, and text where text is shown. */
export function checkReferral(value: unknown, where = 'the referral'): void {
  const r = checkReferralStructure(value, where);
  expectTexts(r, where, TEXTS);
  expectString(r.status, where, 'status');
  for (const f of PARTIES)
    expectTexts(expectObject(r[f], where, f), `${where}, ${f.replace('_', ' ')}`, PARTY_TEXTS);
  expectTexts(expectObject(r.provider, where, 'provider'), `${where}, provider`, PROVIDER_TEXTS);
  const auto = expectObject(r.auto_book_request, where, 'auto_book_request');
  expectTexts(auto, `${where}, auto-book request`, AUTO_BOOK_TEXTS);
  expectTexts(
    expectObject(r.preferred_location, where, 'preferred_location'),
    `${where}, preferred location`,
    PREFERRED_TEXTS,
  );
  expectTexts(expectObject(r.patient, where, 'patient'), `${where}, patient`, PATIENT_TEXTS);
  expectRecords(r.visits, where, 'visits').forEach((visit, i) => {
    const w = `${where}, visit ${i + 1}`;
    expectTexts(visit, w, VISIT_TEXTS);
    expectString(visit.status, w, 'status');
    expectString(visit.start_time, w, 'start_time');
    expectTexts(expectObject(visit.location, w, 'location'), `${w}, location`, LOCATION_TEXTS);
    expectRecords(visit.procedures, w, 'procedures').forEach((proc, j) => {
      const pw = `${w}, procedure ${j + 1}`;
      expectTexts(proc, pw, PROCEDURE_TEXTS);
      expectString(proc.contrast, pw, 'contrast');
      expectString(proc.laterality, pw, 'laterality');
    });
  });
  expectRecords(r.icd10_codes, where, 'icd10_codes').forEach((c, i) => {
    expectTexts(c, `${where}, ICD-10 code ${i + 1}`, ICD10_TEXTS);
  });
  expectRecords(r.call_notes, where, 'call_notes').forEach((n, i) => {
    expectTexts(n, `${where}, call note ${i + 1}`, NOTE_TEXTS);
    expectString(n.created_at, `${where}, call note ${i + 1}`, 'created_at');
  });
}
