/** Resource types from the spec, written once for the client, the renderers and the emulator. */

export interface Modality {
  id: string;
  name: string;
  slug: string;
}

export interface BodyPart {
  id: string;
  name: string;
  slug: string;
  laterality: boolean;
}

export type Contrast = 'with_contrast' | 'without_contrast' | 'without_and_with_contrast';
export type Laterality = 'left' | 'right' | 'not_present';

export interface CptMapping {
  id: string;
  code: string;
  modality_id: string;
  modality_name: string;
  body_part_id: string;
  body_part_name: string;
  contrast: Contrast | string;
  laterality: Laterality | string;
  modifier_id?: string | null;
  modifier_name?: string | null;
  number_of_views?: number | null;
}

export interface Icd10Code {
  id: string;
  code: string;
  short_description: string;
}

export interface LawFirm {
  id: string;
  name: string;
  address_line_1: string;
  address_line_2?: string | null;
  city: string;
  state: string;
  zipcode: string;
}

export interface Location {
  id: string | null;
  address_line_1: string | null;
  address_line_2: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  name: string | null;
  npi: string | null;
}

export interface Procedure {
  body_part: string;
  procedure: string;
  contrast: string;
  laterality: string;
  cpt_code: string | null;
  cpt_code_id: string | null;
  cpt_system: string | null;
  accession_id: string | null;
  study_uid: string | null;
  series_uid: string | null;
  image_link: string | null;
  report_link: string | null;
}

/** Visit statuses the spec lists; others may appear and are shown as they are. */
export const VISIT_STATUSES = [
  'pending',
  'pending_auth',
  'co_signed',
  'intake_sent',
  'ready_to_book',
  'contacted_for_booking',
  'booked',
  'complete',
  'exam_not_completed',
  'sent_to_rad',
  'report_uploaded',
  'qc_report_ready',
  'invoice_ready',
  'sent_to_rp',
  'canceled',
] as const;

export interface Visit {
  id: string;
  modality: string;
  procedures: Procedure[];
  status: string;
  start_time: string | null;
  radiologist_group_name: string | null;
  location: Location;
}

export interface Patient {
  id: string;
  identifier: { system: string; value: string };
  name: string;
  first_name: string;
  last_name: string;
  middle_initial: string | null;
  date_of_birth: string;
  date_of_birth_iso: string | null;
  email: string | null;
  phone_number: string | null;
  gender: string | null;
  address_line_1: string | null;
  address_line_2: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
}

export interface AutoBookRequest {
  id: string;
  status: string;
  strategy: string;
  radius: number;
  address: string | null;
  outcome: string | null;
  error: string | null;
  completed_at: string | null;
}

export interface Referral {
  id: string;
  reference: string;
  status: string;
  line_of_business: string | null;
  payment_type: string | null;
  incident_state: string | null;
  visits: Visit[];
  referring_provider: string | null;
  provider: { id: string | null; name: string | null; npi: string | null };
  law_firm: { id: string | null; name: string | null };
  practice: { id: string | null; name: string | null };
  payor?: { id?: string; name?: string };
  insurance_number?: string | null;
  wc_number?: string | null;
  icd10_codes: Array<{ id: string; code: string; system: string; short_description: string }>;
  patient: Patient;
  call_notes: Array<{ created_at: string; notes: string }>;
  documents: Array<Record<string, unknown>>;
  answered_medical_questionnaire: boolean;
  preferred_location: { id: string | null; name: string | null };
  scheduling_mode: string | null;
  auto_book_request: AutoBookRequest | null;
  [extra: string]: unknown;
}

/** Metadata of an email or SMS tied to a referral (never its recipient or content). */
export interface ReferralNotification {
  id: string;
  channel: string;
  notification_type: string | null;
  status: string;
  created_at: string;
  updated_at: string;
  visit_id?: string | null;
}

export interface ReferralPayment {
  id: string;
  amount: number;
  date: string | null;
  check_number?: string | null;
  procedures: Array<{
    order_id: string;
    accession_id?: string | null;
    cpt_code?: string | null;
    description: string;
  }>;
}
