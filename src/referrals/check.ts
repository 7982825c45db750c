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

/** Everything the detail view and the list table show: the structure, and text where text is shown. */
export function checkReferral(value: unknown, where = 'the referral'): void {
  const r = checkReferralStructure(value, where);
  expectTexts(r, where, [
    'id',
    'reference',
    'line_of_business',
    'payment_type',
    'incident_state',
    'insurance_number',
    'wc_number',
    'referring_provider',
    'scheduling_mode',
  ]);
  expectString(r.status, where, 'status');
  for (const f of ['law_firm', 'practice', 'payor'])
    expectTexts(expectObject(r[f], where, f), `${where}, ${f.replace('_', ' ')}`, ['id', 'name']);
  expectTexts(expectObject(r.provider, where, 'provider'), `${where}, provider`, ['name', 'npi']);
  const auto = expectObject(r.auto_book_request, where, 'auto_book_request');
  expectTexts(auto, `${where}, auto-book request`, ['status', 'outcome', 'strategy', 'radius']);
  expectTexts(
    expectObject(r.preferred_location, where, 'preferred_location'),
    `${where}, preferred location`,
    ['name'],
  );
  expectTexts(expectObject(r.patient, where, 'patient'), `${where}, patient`, [
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
  ]);
  expectRecords(r.visits, where, 'visits').forEach((visit, i) => {
    const w = `${where}, visit ${i + 1}`;
    expectTexts(visit, w, ['id', 'modality', 'radiologist_group_name']);
    expectString(visit.status, w, 'status');
    expectString(visit.start_time, w, 'start_time');
    expectTexts(expectObject(visit.location, w, 'location'), `${w}, location`, [
      'id',
      'name',
      ...ADDRESS,
      'npi',
    ]);
    expectRecords(visit.procedures, w, 'procedures').forEach((proc, j) => {
      const pw = `${w}, procedure ${j + 1}`;
      expectTexts(proc, pw, [
        'body_part',
        'procedure',
        'cpt_code',
        'accession_id',
        'report_link',
        'image_link',
      ]);
      expectString(proc.contrast, pw, 'contrast');
      expectString(proc.laterality, pw, 'laterality');
    });
  });
  expectRecords(r.icd10_codes, where, 'icd10_codes').forEach((c, i) => {
    expectTexts(c, `${where}, ICD-10 code ${i + 1}`, ['code', 'short_description']);
  });
  expectRecords(r.call_notes, where, 'call_notes').forEach((n, i) => {
    expectTexts(n, `${where}, call note ${i + 1}`, ['notes']);
    expectString(n.created_at, `${where}, call note ${i + 1}`, 'created_at');
  });
}
