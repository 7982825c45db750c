/**
 * The documented fields of each resource (the API specification's tables), as the dotted paths
 * `--fields` names and list CSV orders its columns by: objects are followed to their documented
 * leaves (`patient.last_name`), arrays are one field (`visits`, `icd10_codes`). Data only: the
 * help, the parser's `--json a,b` check and the renderers read it. The export's flat columns are
 * here too (checked equal to src/export/rows.ts by test/unit/fields.test.ts).
 */

const nest = (prefix: string, names: readonly string[]) => names.map((n) => `${prefix}.${n}`);

export const MODALITY_FIELDS = ['id', 'name', 'slug'] as const;
export const BODY_PART_FIELDS = ['id', 'name', 'slug', 'laterality'] as const;
export const CPT_FIELDS = [
  'id',
  'code',
  'modality_id',
  'modality_name',
  'body_part_id',
  'body_part_name',
  'contrast',
  'laterality',
  'modifier_id',
  'modifier_name',
  'number_of_views',
] as const;
export const ICD10_FIELDS = ['id', 'code', 'short_description'] as const;
export const LAW_FIRM_FIELDS = [
  'id',
  'name',
  'address_line_1',
  'address_line_2',
  'city',
  'state',
  'zipcode',
] as const;

export const REFERRAL_FIELDS: readonly string[] = [
  'id',
  'reference',
  'status',
  'line_of_business',
  'payment_type',
  'incident_state',
  'visits',
  'referring_provider',
  ...nest('provider', ['id', 'name', 'npi']),
  ...nest('law_firm', ['id', 'name']),
  ...nest('practice', ['id', 'name']),
  ...nest('payor', ['id', 'name']),
  'insurance_number',
  'wc_number',
  'icd10_codes',
  ...nest('patient', [
    'id',
    'identifier.system',
    'identifier.value',
    'name',
    'first_name',
    'last_name',
    'middle_initial',
    'date_of_birth',
    'date_of_birth_iso',
    'email',
    'phone_number',
    'gender',
    'address_line_1',
    'address_line_2',
    'city',
    'state',
    'zip_code',
  ]),
  'call_notes',
  'documents',
  'answered_medical_questionnaire',
  ...nest('preferred_location', ['id', 'name']),
  'scheduling_mode',
  ...nest('auto_book_request', [
    'id',
    'status',
    'strategy',
    'radius',
    'address',
    'outcome',
    'error',
    'completed_at',
  ]),
];

/** ReferralPayment and ReferralNotification (for `referrals payments|notifications`). */
export const PAYMENT_FIELDS = ['id', 'amount', 'date', 'check_number', 'procedures'] as const;
export const NOTIFICATION_FIELDS = [
  'id',
  'channel',
  'notification_type',
  'status',
  'created_at',
  'updated_at',
  'visit_id',
] as const;

/** The export's flat rows (README "Export columns"). */
const CONTEXT_COLUMNS = [
  'referral_id',
  'reference',
  'referral_status',
  'line_of_business',
  'patient_first_name',
  'patient_last_name',
  'patient_date_of_birth',
  'law_firm_name',
  'payor_name',
];
export const EXPORT_COLUMNS = {
  referral: [
    'referral_id',
    'reference',
    'referral_status',
    'line_of_business',
    'payment_type',
    'incident_state',
    'patient_id',
    'patient_first_name',
    'patient_last_name',
    'patient_date_of_birth',
    'law_firm_id',
    'law_firm_name',
    'practice_id',
    'practice_name',
    'payor_id',
    'payor_name',
    'insurance_number',
    'wc_number',
    'referring_provider',
    'provider_name',
    'provider_npi',
    'scheduling_mode',
    'icd10_codes',
    'visit_count',
    'latest_visit_status',
    'auto_book_status',
    'auto_book_outcome',
  ],
  visit: [
    ...CONTEXT_COLUMNS,
    'visit_id',
    'modality',
    'visit_status',
    'start_time',
    'location_id',
    'location_name',
    'location_address_line_1',
    'location_address_line_2',
    'location_city',
    'location_state',
    'location_zip_code',
    'location_npi',
    'radiologist_group_name',
    'procedure_count',
    'cpt_codes',
    'accession_ids',
  ],
  procedure: [
    ...CONTEXT_COLUMNS,
    'visit_id',
    'modality',
    'visit_status',
    'start_time',
    'location_name',
    'location_city',
    'location_state',
    'procedure_index',
    'body_part',
    'procedure',
    'contrast',
    'laterality',
    'cpt_code',
    'cpt_code_id',
    'cpt_system',
    'accession_id',
    'study_uid',
    'series_uid',
    'report_link',
    'image_link',
  ],
} as const satisfies Record<string, readonly string[]>;

/** A named set of fields, as a command's help lists it. */
export interface FieldSet {
  /** When a command has several ("--rows visit"); absent for one. */
  readonly label?: string;
  readonly fields: readonly string[];
}
