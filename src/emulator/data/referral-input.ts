import type { Patient, Procedure, Referral, Visit } from '../../api/types.js';
import type { ReferenceData } from './reference-data.js';
import { CPT_SYSTEM, ICD_SYSTEM, noLocation, PATIENT_SYSTEM } from './referral-data.js';

/**
 * What the emulator makes of a create or update payload (neither shape is published): a created
 * referral is what the payload sets; an update changes only the fields the spec allows and refuses
 * any other, so a typo in a field name is a 422, not a no-op.
 */

/** The read side's payment types (the create request's legacy `payment_type`, `pi`, is not one). */
const PAYMENT_TYPES = [
  'lien',
  'insurance',
  'med_pay',
  'pip',
  'cash_pay',
  'funded',
  'servicing',
  'outside_servicing',
];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export function referralFields(body: unknown): Obj | undefined {
  if (!isObj(body)) return undefined;
  return isObj(body.referral) ? body.referral : body;
}

export interface Sources {
  ref: ReferenceData;
  lawFirms: ReadonlyArray<{ id: string; name: string }>;
  newId: () => string;
}

export function checkReferences(fields: Obj, src: Sources): string[] {
  const errors: string[] = [];
  const lawFirmId = str(fields.law_firm_id);
  if (lawFirmId && !src.lawFirms.some((f) => f.id === lawFirmId))
    errors.push(`Law firm ${lawFirmId} does not exist`);
  for (const id of icdIds(fields)) {
    if (!src.ref.icd10.some((c) => c.id === id || c.code === id))
      errors.push(`ICD-10 code ${id} does not exist`);
  }
  for (const p of givenProcedures(fields)) {
    const parts = [...new Set(codeCandidates(p, src).map((c) => c.body_part_name))];
    if (!str(p.cpt_code_id) && parts.length > 1)
      errors.push(
        `CPT code ${str(p.cpt_code)} maps to several body parts (${parts.join(', ')}): give the cpt_code_id of the mapping meant`,
      );
  }
  return errors;
}

function givenProcedures(fields: Obj): Obj[] {
  const visits = Array.isArray(fields.visits)
    ? fields.visits
    : Array.isArray(fields.orders)
      ? fields.orders
      : [];
  return visits
    .filter(isObj)
    .flatMap((v) => (Array.isArray(v.procedures) ? v.procedures : []))
    .filter(isObj);
}

/** The mappings a procedure's `cpt_code` (and its laterality, when given) could mean. */
function codeCandidates(p: Obj, src: Sources) {
  const byCode = str(p.cpt_code);
  if (!byCode) return [];
  return src.ref.cpt.filter(
    (c) => c.code === byCode && (!str(p.laterality) || c.laterality === p.laterality),
  );
}

function icdIds(fields: Obj): string[] {
  const given = fields.icd10_code_ids ?? fields.icd10_codes;
  if (!Array.isArray(given)) return [];
  return given.map((x) => (isObj(x) ? String(x.id ?? x.code ?? '') : String(x)));
}

function icdCodes(fields: Obj, src: Sources): Referral['icd10_codes'] {
  return icdIds(fields).flatMap((key) => {
    const c = src.ref.icd10.find((x) => x.id === key || x.code === key);
    return c ? [{ id: c.id, code: c.code, system: ICD_SYSTEM, short_description: c.short_description }] : [];
  });
}

function lawFirm(fields: Obj, src: Sources): Referral['law_firm'] {
  const id = str(fields.law_firm_id) ?? (isObj(fields.law_firm) ? str(fields.law_firm.id) : null);
  const firm = id ? src.lawFirms.find((f) => f.id === id) : undefined;
  return firm ? { id: firm.id, name: firm.name } : { id: null, name: null };
}

function datesOfBirth(p: Obj): { date_of_birth: string; date_of_birth_iso: string | null } {
  const iso = str(p.date_of_birth_iso);
  const us = str(p.date_of_birth);
  const isoMatch = iso?.match(/^(\d{4})-(\d{2})-(\d{2})$/);
  if (isoMatch)
    return { date_of_birth: `${isoMatch[2]}/${isoMatch[3]}/${isoMatch[1]}`, date_of_birth_iso: iso };
  const usMatch = us?.match(/^(\d{2})\/(\d{2})\/(\d{4})$/);
  if (usMatch) return { date_of_birth: us!, date_of_birth_iso: `${usMatch[3]}-${usMatch[1]}-${usMatch[2]}` };
  return { date_of_birth: us ?? '', date_of_birth_iso: iso };
}

function patient(p: Obj, src: Sources): Patient {
  const first = String(p.first_name);
  const last = String(p.last_name);
  return {
    id: src.newId(),
    identifier: { system: PATIENT_SYSTEM, value: src.newId() },
    name: `${first} ${last}`,
    first_name: first,
    last_name: last,
    middle_initial: str(p.middle_initial),
    ...datesOfBirth(p),
    email: str(p.email),
    phone_number: str(p.phone_number),
    gender: str(p.gender),
    address_line_1: str(p.address_line_1),
    address_line_2: str(p.address_line_2),
    city: str(p.city),
    state: str(p.state),
    zip_code: str(p.zip_code),
  };
}

function procedure(p: Obj, src: Sources): Procedure {
  const byId = str(p.cpt_code_id);
  const byCode = str(p.cpt_code);
  const m =
    (byId && src.ref.cpt.find((c) => c.id === byId)) ||
    // A code of several body parts without its cpt_code_id was refused before (checkReferences).
    (byCode && codeCandidates(p, src)[0]) ||
    undefined;
  const bodyPart = m?.body_part_name ?? str(p.body_part) ?? '';
  const contrast = m?.contrast ?? str(p.contrast) ?? '';
  return {
    body_part: bodyPart,
    procedure: m ? `${m.modality_name} ${bodyPart} ${contrast.replace(/_/g, ' ')}` : (str(p.procedure) ?? ''),
    contrast,
    laterality: m?.laterality ?? str(p.laterality) ?? 'not_present',
    cpt_code: m?.code ?? byCode,
    cpt_code_id: m?.id ?? null,
    cpt_system: m || byCode ? CPT_SYSTEM : null,
    accession_id: null,
    study_uid: null,
    series_uid: null,
    image_link: null,
    report_link: null,
  };
}

function visit(v: Obj, src: Sources): Visit {
  const procedures = (Array.isArray(v.procedures) ? v.procedures : [])
    .filter(isObj)
    .map((p) => procedure(p, src));
  const firstMapping = src.ref.cpt.find((c) => c.id === procedures[0]?.cpt_code_id);
  return {
    id: src.newId(),
    modality: str(v.modality) ?? firstMapping?.modality_name ?? '',
    procedures,
    status: 'pending',
    start_time: null,
    radiologist_group_name: null,
    location: noLocation(),
  };
}

function paymentType(fields: Obj, lob: string): string | null {
  const given = str(fields.payment_type);
  if (given && PAYMENT_TYPES.includes(given)) return given;
  // The legacy create field (`pi`) or none: what the service returns for the line of business.
  return lob === 'personal_injury' ? 'lien' : 'insurance';
}

export function createdReferral(fields: Obj, id: string, reference: string, src: Sources): Referral {
  const lob = str(fields.line_of_business) ?? 'personal_injury';
  const visits = (
    Array.isArray(fields.visits) ? fields.visits : Array.isArray(fields.orders) ? fields.orders : []
  )
    .filter(isObj)
    .map((v) => visit(v, src));
  const provider = isObj(fields.provider) ? fields.provider : {};
  const referral: Referral = {
    id,
    reference,
    status: 'pending',
    line_of_business: lob,
    payment_type: paymentType(fields, lob),
    incident_state: str(fields.incident_state),
    visits,
    referring_provider: str(fields.referring_provider),
    provider: { id: str(provider.id), name: str(provider.name), npi: str(provider.npi) },
    law_firm: lawFirm(fields, src),
    practice: { id: null, name: null },
    icd10_codes: icdCodes(fields, src),
    patient: patient(fields.patient as Obj, src),
    call_notes: [],
    documents: [],
    answered_medical_questionnaire: false,
    preferred_location: { id: str(fields.preferred_location_id), name: null },
    scheduling_mode: str(fields.scheduling_mode),
    auto_book_request: null,
  };
  if (lob === 'workers_comp' || lob === 'health_plan') {
    referral.insurance_number = str(fields.insurance_number);
    if (lob === 'workers_comp') referral.wc_number = str(fields.wc_number);
  }
  return referral;
}

const UPDATABLE = [
  'law_firm_id',
  'practice_id',
  'provider_id',
  'referring_provider',
  'icd10_code_ids',
  'icd10_codes',
  'incident_state',
  'wc_number',
  'insurance_number',
] as const;
const TEXT_FIELDS = ['referring_provider', 'incident_state', 'wc_number', 'insurance_number'] as const;

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * The update's fields of the wrong type, each named: refused, never stored as null in place of what
 * was there. null (or "") clears a text field; [] clears the ICD-10 codes.
 */
function wrongTypes(fields: Obj): string[] {
  const errors: string[] = [];
  for (const key of ['law_firm_id', 'practice_id', 'provider_id', ...TEXT_FIELDS])
    if (key in fields && fields[key] !== null && typeof fields[key] !== 'string')
      errors.push(`${key} must be a string or null, not ${typeOf(fields[key])}`);
  for (const key of ['icd10_code_ids', 'icd10_codes']) {
    if (!(key in fields)) continue;
    const v = fields[key];
    const idOf = (x: unknown) =>
      typeof x === 'string' || (isObj(x) && (typeof x.id === 'string' || typeof x.code === 'string'));
    if (!Array.isArray(v)) errors.push(`${key} must be an array of ICD-10 code ids, not ${typeOf(v)}`);
    else if (!v.every(idOf)) errors.push(`${key} must be an array of ICD-10 code ids (strings)`);
  }
  return errors;
}

export function updatedReferral(referral: Referral, fields: Obj, src: Sources): Referral | string[] {
  const unknown = Object.keys(fields).filter((k) => !(UPDATABLE as readonly string[]).includes(k));
  const errors = unknown.map((k) => `${k} cannot be updated (updatable: ${UPDATABLE.join(', ')})`);
  errors.push(...wrongTypes(fields));
  if (errors.length > 0) return errors;
  errors.push(...checkReferences(fields, src));
  for (const key of ['practice_id', 'provider_id'])
    if (
      str(fields[key]) &&
      !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(String(fields[key]))
    )
      errors.push(`${key} ${String(fields[key])} is not an id`);
  if (Object.keys(fields).length === 0) errors.push('Nothing to update');
  if (errors.length > 0) return errors;
  const out = structuredClone(referral);
  if ('law_firm_id' in fields) out.law_firm = lawFirm(fields, src);
  // The emulator keeps no practices or providers: an id is taken as given, its name kept when it is the same one.
  if ('practice_id' in fields) {
    const id = str(fields.practice_id);
    out.practice = { id, name: id && id === referral.practice?.id ? referral.practice.name : null };
  }
  if ('provider_id' in fields) {
    const id = str(fields.provider_id);
    const same = id && id === referral.provider?.id;
    out.provider = {
      id,
      name: same ? referral.provider.name : null,
      npi: same ? referral.provider.npi : null,
    };
  }
  if ('icd10_code_ids' in fields || 'icd10_codes' in fields) out.icd10_codes = icdCodes(fields, src);
  for (const key of TEXT_FIELDS) if (key in fields) out[key] = str(fields[key]);
  return out;
}
