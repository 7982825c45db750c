import { type Procedure, type Referral, VISIT_STATUSES, type Visit } from '../../api/types.js';
import type { DocumentLinks } from './documents.js';
import { pick, rng, uuidFrom } from './random.js';
import type { ReferenceData } from './reference-data.js';

/** Synthetic referrals, each a pure function of (seed, index), so none is held in memory. */

/** The items of a table written as text: separated by ` | ` or a new line. */
const items = (text: string) => text.trim().split(/ \| |\n\s*/);

const FIRST = items(`
  Maria | James | Aisha | Wei | José | Olivia | Liam | Zoë | Mohammed | Siobhán | Nguyễn Thị
  Ana-Lucía | Chloé | Björn | Priya | D'Andre | Mary "Molly" | Jean-Luc | Noah | Emma
`);
const LAST = items(`
  Garcia | Smith | Okafor | Chen | O'Connor | Müller | Nguyen | Johnson | Patel | Kowalski
  Smith, Jr. | Rodríguez-López | Lee | Hernández | Brown | Ødegaard | =Hyperlink | Williams | Kim | Davis
`);
const CITIES: Array<[string, string, string]> = [
  ['Philadelphia', 'PA', '19103'],
  ['Chicago', 'IL', '60601'],
  ['Miami', 'FL', '33130'],
  ['Los Angeles', 'CA', '90012'],
  ['Houston', 'TX', '77002'],
  ['Brooklyn', 'NY', '11201'],
  ['Phoenix', 'AZ', '85004'],
  ['Atlanta', 'GA', '30303'],
];
const CENTERS = items(`
  Downtown Imaging Center | Northside MRI & CT | St. Luke's Radiology, East Campus
  Advanced "Open" MRI | Clínica de Imágenes del Sur | Lakeside Diagnostic Imaging
`);
const RAD_GROUPS = ['Metro Radiology Associates', 'Premier Reading Group, P.A.', 'TeleRad Partners', null];
const NOTES = [
  'Left voicemail for patient, will call back tomorrow.',
  'Patient asked to reschedule: "after 3pm only", prefers Saturdays',
  'Spoke with paralegal; authorization pending.\nFollow up Friday.',
  '=CALL BACK 555-0100',
  'Patient requested an open MRI (claustrophobic).',
  '+1 interpreter needed (Spanish)',
  '-- confirmed with adjuster --',
  '@front desk: bring ID and insurance card',
];
const LINES = ['personal_injury', 'workers_comp', 'health_plan', 'patient_direct'] as const;
const PAYMENT: Record<(typeof LINES)[number], string[]> = {
  personal_injury: ['lien', 'med_pay', 'pip', 'funded', 'funding', 'servicing'],
  workers_comp: ['insurance'],
  health_plan: ['insurance', 'outside_servicing'],
  patient_direct: ['cash_pay'],
};
const REFERRAL_STATUSES = items(`
  pending | pending | pending | invoice_ready | invoice_sent | closed | canceled | ar_collections
`);
const SCHEDULING = [
  ...items('anytime_anywhere | time_preferences | existing_appointment | needs_other_location'),
  null,
];
const PAYORS = items(`
  Liberty Mutual | Travelers | The Hartford | Blue Cross, Blue Shield | Aetna | Zenith Insurance Co.
`);
const PROVIDERS = ['Dr. Sarah Connor', 'Dr. Raj Patel, MD', "Dr. Emily O'Neil", 'Dr. José Álvarez', null];
/** Statuses the spec lists, weighted toward the middle, plus one it does not (clients must show it as is). */
const VISIT_STATUS_POOL = items(`
  pending | pending_auth | co_signed | intake_sent | ready_to_book | contacted_for_booking
  booked | booked | complete | exam_not_completed | sent_to_rad | report_uploaded
  report_uploaded | qc_report_ready | invoice_ready | sent_to_rp | canceled | awaiting_records
`);

const BOOKED = VISIT_STATUSES.indexOf('booked');
export const CPT_SYSTEM = 'http://www.ama-assn.org/go/cpt';
export const ICD_SYSTEM = 'http://hl7.org/fhir/sid/icd-10-cm';
export const PATIENT_SYSTEM = 'urn:partner-imaging:patient-id';

const PAGE_CACHE_BYTES = 32 * 1024 * 1024;

/** The generated referrals (by index), then the created ones; an update replaces one by id. */
export class ReferralStore {
  private readonly ids: string[] = [];
  private readonly index = new Map<string, number>();
  /** Updated and created referrals, by id. */
  private readonly stored = new Map<string, Referral>();
  /** Serialised referrals, kept so that serving a page costs a join, not a build (bounded). */
  private readonly jsonCache = new Map<number, string>();
  /**
   * Whole list answers as sent, by their range and wrapping: the tests walk the same pages of one
   * store again and again. Cleared by any change to the store; bounded by size.
   */
  private readonly pageCache = new Map<string, Buffer>();
  private pageCacheBytes = 0;
  /**
   * Generated referrals, kept so that a filtered list or a search (which reads every referral) costs
   * a look-up, not a build, from the second time on (bounded). Shared like the stored ones: a change
   * is a clone given to `put`, never an edit of what `at` returned.
   */
  private readonly built = new Map<number, Referral>();
  /** Sets report links and document URLs on every referral served (once the server has its ports). */
  links: DocumentLinks | undefined;

  constructor(
    private readonly seed: number,
    count: number,
    private readonly ref: ReferenceData,
  ) {
    const rand = rng(seed * 7 + 3);
    for (let i = 0; i < count; i++) this.remember(uuidFrom(rand));
  }

  private remember(id: string): void {
    this.index.set(id, this.ids.length);
    this.ids.push(id);
  }

  get total(): number {
    return this.ids.length;
  }

  at(i: number): Referral {
    const id = this.ids[i]!;
    const stored = this.stored.get(id);
    if (stored) return stored;
    let referral = this.built.get(i);
    if (referral === undefined) {
      referral = this.decorated(generateReferral(this.seed, i, id, this.ref));
      // Links are set once the server has its ports: what was built before then is built again.
      if (this.links && this.built.size < 20_000) this.built.set(i, referral);
    }
    return referral;
  }

  get(id: string): Referral | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.at(i);
  }

  json(i: number): string {
    let text = this.jsonCache.get(i);
    if (text === undefined) {
      text = JSON.stringify(this.at(i));
      if (this.jsonCache.size < 100_000) this.jsonCache.set(i, text);
    }
    return text;
  }

  /** Referrals `start` to `end` joined by commas between `head` and `tail`, as UTF-8 bytes. */
  pageBody(start: number, end: number, head: string, tail: string): Buffer {
    const key = `${start}:${end}:${head}:${tail}`;
    const cached = this.pageCache.get(key);
    if (cached) return cached;
    const body = Buffer.from(`${head}${this.sliceJson(start, end).join(',')}${tail}`);
    if (this.pageCacheBytes + body.length <= PAGE_CACHE_BYTES) {
      this.pageCache.set(key, body);
      this.pageCacheBytes += body.length;
    }
    return body;
  }

  sliceJson(start: number, end: number): string[] {
    const out: string[] = [];
    for (let i = start; i < Math.min(end, this.total); i++) out.push(this.json(i));
    return out;
  }

  slice(start: number, end: number): Referral[] {
    const out: Referral[] = [];
    for (let i = start; i < Math.min(end, this.total); i++) out.push(this.at(i));
    return out;
  }

  /** Lets go of what was kept to answer faster (the emulator has stopped; a read builds again). */
  forget(): void {
    this.forgetPages();
    this.jsonCache.clear();
    this.built.clear();
  }

  add(referral: Referral): void {
    this.forgetPages();
    this.remember(referral.id);
    this.stored.set(referral.id, referral);
  }

  private decorated(referral: Referral): Referral {
    return this.links ? this.links.decorate(referral) : referral;
  }

  /** A changed referral: a visit that has reached report_uploaded gets its report link here. */
  put(changed: Referral): void {
    const referral = this.decorated(changed);
    const i = this.index.get(referral.id);
    if (i === undefined) return;
    this.stored.set(referral.id, referral);
    this.jsonCache.delete(i);
    this.forgetPages();
  }

  private forgetPages(): void {
    this.pageCache.clear();
    this.pageCacheBytes = 0;
  }
}

export function noLocation(): Visit['location'] {
  return {
    id: null,
    address_line_1: null,
    address_line_2: null,
    city: null,
    state: null,
    zip_code: null,
    name: null,
    npi: null,
  };
}

function generateVisits(
  rand: () => number,
  u: () => string,
  i: number,
  ref: ReferenceData,
  base: number,
): Visit[] {
  const visitCount = i % 9 === 0 ? 0 : 1 + Math.floor(rand() * 3);
  const visits: Visit[] = [];
  for (let v = 0; v < visitCount; v++) {
    const mapping = pick(rand, ref.cpt);
    const status = pick(rand, VISIT_STATUS_POOL);
    const center = pick(rand, CENTERS);
    const [cCity, cState, cZip] = pick(rand, CITIES);
    // Booked or further along (a status the spec does not list is treated as further along).
    const rank = VISIT_STATUSES.indexOf(status as (typeof VISIT_STATUSES)[number]);
    const scheduled = rank < 0 || (rank >= BOOKED && status !== 'canceled');
    const reported = ['report_uploaded', 'qc_report_ready', 'invoice_ready', 'sent_to_rp'].includes(status);
    const procCount = 1 + Math.floor(rand() * 2);
    const procedures = generateProcedures(rand, ref, mapping, { i, v, procCount, scheduled, reported });
    visits.push({
      id: u(),
      modality: mapping.modality_name,
      procedures,
      status,
      start_time: scheduled ? new Date(base + v * 86_400_000 * 3 + 14 * 3_600_000).toISOString() : null,
      radiologist_group_name: scheduled ? pick(rand, RAD_GROUPS) : null,
      location: scheduled
        ? {
            id: u(),
            address_line_1: `${100 + Math.floor(rand() * 900)} Health Plaza`,
            address_line_2: rand() < 0.3 ? 'Suite 2, "Building B"' : null,
            city: cCity,
            state: cState,
            zip_code: cZip,
            name: center,
            npi: String(1_000_000_000 + Math.floor(rand() * 899_999_999)),
          }
        : noLocation(),
    });
  }
  return visits;
}

function generateProcedures(
  rand: () => number,
  ref: ReferenceData,
  mapping: ReferenceData['cpt'][number],
  at: { i: number; v: number; procCount: number; scheduled: boolean; reported: boolean },
): Procedure[] {
  const procedures: Procedure[] = [];
  const sameModality = () => ref.cpt.filter((c) => c.modality_name === mapping.modality_name);
  for (let p = 0; p < at.procCount; p++) {
    const m = p === 0 ? mapping : pick(rand, sameModality());
    const accession = `ACC-${(at.i * 10 + at.v) * 10 + p + 100000}`;
    procedures.push({
      body_part: m.body_part_name,
      procedure: `${m.modality_name} ${m.body_part_name} ${m.contrast.replace(/_/g, ' ')}`,
      contrast: m.contrast,
      laterality: m.laterality,
      cpt_code: rand() < 0.95 ? m.code : null,
      cpt_code_id: rand() < 0.95 ? m.id : null,
      cpt_system: CPT_SYSTEM,
      accession_id: at.scheduled ? accession : null,
      study_uid: at.reported ? `1.2.840.113619.2.${at.i}.${at.v}.${p}` : null,
      series_uid: at.reported ? `1.2.840.113619.2.${at.i}.${at.v}.${p}.1` : null,
      image_link: at.reported ? `https://images.example.invalid/studies/${accession}` : null,
      report_link: at.reported ? `https://reports.example.invalid/${accession}.pdf` : null,
    });
  }
  return procedures;
}

function generatePatient(
  rand: () => number,
  u: () => string,
  i: number,
  p: Record<'first' | 'last' | 'mm' | 'dd' | 'city' | 'state' | 'zip', string> & { year: number },
): Referral['patient'] {
  const { first, last, year, mm, dd, city, state, zip } = p;
  return {
    id: u(),
    identifier: { system: PATIENT_SYSTEM, value: u() },
    name: `${first} ${last}`,
    first_name: first,
    last_name: last,
    middle_initial: rand() < 0.4 ? String.fromCharCode(65 + Math.floor(rand() * 26)) : null,
    date_of_birth: `${mm}/${dd}/${year}`,
    date_of_birth_iso: rand() < 0.95 ? `${year}-${mm}-${dd}` : null,
    email: rand() < 0.7 ? `patient${i}@example.com` : null,
    phone_number: rand() < 0.8 ? `+1215555${String(i % 10000).padStart(4, '0')}` : null,
    gender: pick(rand, ['male', 'female', 'other', null]),
    address_line_1: `${1 + Math.floor(rand() * 9999)} ${pick(rand, ['Oak St', 'Maple Ave, Apt 4', 'Main St'])}`,
    address_line_2: null,
    city,
    state,
    zip_code: zip,
  };
}

function generateReferral(seed: number, i: number, id: string, ref: ReferenceData): Referral {
  const rand = rng(seed * 1_000_003 + i * 7919 + 17);
  const u = () => uuidFrom(rand);
  const line = LINES[i % LINES.length]!;
  const [city, state, zip] = pick(rand, CITIES);
  const first = pick(rand, FIRST);
  const last = pick(rand, LAST);
  const year = 1950 + Math.floor(rand() * 50);
  const mm = String(1 + Math.floor(rand() * 12)).padStart(2, '0');
  const dd = String(1 + Math.floor(rand() * 28)).padStart(2, '0');
  const firm = pick(rand, ref.lawFirms);
  const base = Date.UTC(2026, 0, 5) + i * 3_600_000 * 5;
  const visits = generateVisits(rand, u, i, ref, base);
  const icdCount = 1 + Math.floor(rand() * 3);
  const icd10_codes = Array.from({ length: icdCount }, () => {
    const c = pick(rand, ref.icd10);
    return { id: c.id, code: c.code, system: ICD_SYSTEM, short_description: c.short_description };
  });
  const referral: Referral = {
    id,
    reference: `R-${String(240000 + i).padStart(6, '0')}`,
    status: pick(rand, REFERRAL_STATUSES),
    line_of_business: i % 23 === 5 ? null : line,
    payment_type: pick(rand, PAYMENT[line]),
    incident_state: rand() < 0.9 ? state : null,
    visits,
    referring_provider: pick(rand, PROVIDERS),
    provider:
      rand() < 0.8
        ? { id: u(), name: pick(rand, PROVIDERS), npi: String(1_100_000_000 + i) }
        : { id: null, name: null, npi: null },
    law_firm: line === 'personal_injury' ? { id: firm.id, name: firm.name } : { id: null, name: null },
    practice:
      rand() < 0.5
        ? {
            id: u(),
            name: pick(rand, ['Spine & Joint Clinic', 'Westside Chiropractic, LLC', 'Ortho "Plus" Group']),
          }
        : { id: null, name: null },
    icd10_codes,
    patient: generatePatient(rand, u, i, { first, last, year, mm, dd, city, state, zip }),
    call_notes: Array.from({ length: Math.floor(rand() * 3) }, (_, n) => ({
      created_at: new Date(base - (n + 1) * 86_400_000).toISOString(),
      notes: pick(rand, NOTES),
    })),
    documents: rand() < 0.3 ? [{ kind: 'aob', url: `https://docs.example.invalid/aob/${id}.pdf` }] : [],
    answered_medical_questionnaire: rand() < 0.6,
    preferred_location: rand() < 0.3 ? { id: u(), name: pick(rand, CENTERS) } : { id: null, name: null },
    scheduling_mode: pick(rand, SCHEDULING),
    auto_book_request:
      rand() < 0.25
        ? {
            id: u(),
            status: 'completed',
            strategy: pick(rand, ['closest', 'soonest', 'closest_soonest']),
            radius: 5 + Math.floor(rand() * 50),
            address: null,
            outcome: pick(rand, ['booked', 'contacted_for_booking', 'no_availability', 'booking_failed']),
            error: null,
            completed_at: new Date(base).toISOString(),
          }
        : null,
    // Fields the spec does not list: clients must keep them (JSON) and ignore them (tables).
    partner_metadata: { source: 'emulator', batch: Math.floor(i / 100) },
  };
  // payor, insurance_number: workers' comp and health plan only; wc_number: workers' comp only.
  if (line === 'workers_comp' || line === 'health_plan') {
    const payorName = pick(rand, PAYORS);
    referral.payor = rand() < 0.9 ? { id: u(), name: payorName } : { id: u() };
    referral.insurance_number = rand() < 0.85 ? `MBR${100000 + i}` : null;
    if (line === 'workers_comp')
      referral.wc_number = rand() < 0.8 ? `WCB-${2026}-${String(i).padStart(5, '0')}` : null;
  }
  return referral;
}
