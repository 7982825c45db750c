import type { Referral } from '../api/types.js';
import { clean, joinSafe, type SafeText, safe, style } from '../output/text.js';
import { type DocumentRow, documentFields, linkCell } from '../resources/documents.js';
import { mostAdvancedVisit, patientDob } from '../resources/referrals.js';
import { bareLink } from '../util/link.js';
import { peopleTime } from '../util/time.js';
import { documentLink, documentRows } from './documents.js';

type Pairs = Array<[string, unknown]>;

/** Lines of a view: every value from the server passes clean() (one line, escapes visible). */
class View {
  readonly out: Array<string | SafeText> = [];
  constructor(
    private readonly color: boolean,
    readonly timeZone: string | undefined,
  ) {}
  b = (s: unknown) => style('bold', s, this.color);
  dim = (s: unknown) => style('dim', s, this.color);
  v = (x: unknown): string =>
    x === null || x === undefined || x === '' ? '-' : clean(String(x)).replace(/\s+/g, ' ').trim() || '-';
  when = (iso: unknown) => peopleTime(iso, { timeZone: this.timeZone });
  /** Label: value lines, labels padded to the longest; rows whose value is undefined are left out. */
  pairs(rows: Pairs, indent = ''): void {
    const shown = rows.filter(([, value]) => value !== undefined);
    let w = 0;
    for (const [k] of shown) w = Math.max(w, k.length + 1);
    for (const [k, value] of shown)
      this.out.push(safe`${indent}${this.dim(`${k}:`.padEnd(w))}  ${this.v(value)}`);
  }
  section(title: string): void {
    this.out.push('', this.b(title));
  }
}

const name = (view: View, o: { name?: unknown; id?: unknown } | undefined) =>
  o && (o.name || o.id) ? view.v(o.name ?? o.id) : '-';
const joined = (parts: unknown[]) => parts.filter(Boolean).join(', ');
type Address = {
  address_line_1?: unknown;
  address_line_2?: unknown;
  city?: unknown;
  state?: unknown;
  zip_code?: unknown;
};
const address = (a: Address) =>
  joined([a.address_line_1, a.address_line_2, joined([a.city, a.state]), a.zip_code]);

/** The human view of one referral: header, patient, visits, ICD-10 codes and call notes. */
export function renderReferral(
  r: Referral,
  opts: { color: boolean; timeZone: string | undefined },
): SafeText {
  const view = new View(opts.color, opts.timeZone);
  renderSummary(view, r);
  renderPatient(view, r.patient);
  renderVisits(view, Array.isArray(r.visits) ? r.visits : []);
  renderDocuments(view, documentRows(r), r);
  const codes = Array.isArray(r.icd10_codes) ? r.icd10_codes : [];
  view.section(`ICD-10 codes (${codes.length})`);
  for (const c of codes) view.out.push(safe`  ${view.v(c.code).padEnd(9)} ${view.v(c.short_description)}`);
  if (codes.length === 0) view.out.push('  none');
  const notes = Array.isArray(r.call_notes) ? r.call_notes : [];
  view.section(`Call notes (${notes.length})`);
  for (const n of notes) view.out.push(safe`  ${view.v(view.when(n.created_at))}  ${view.v(n.notes)}`);
  if (notes.length === 0) view.out.push('  none');
  return safe`${joinSafe(view.out, '\n')}\n`;
}

function renderSummary(view: View, r: Referral): void {
  const { b, dim, v } = view;
  const auto = r.auto_book_request;
  view.out.push(safe`${b(`Referral ${v(r.reference)}`)}  ${dim(v(r.id))}`);
  view.pairs([
    ['Status', r.status],
    ['Most advanced visit', mostAdvancedVisit(r.visits)],
    ['Line of business', r.line_of_business],
    ['Payment type', r.payment_type],
    ['Incident state', r.incident_state],
    ['Law firm', name(view, r.law_firm)],
    ['Practice', name(view, r.practice)],
    ['Payor', r.payor ? name(view, r.payor) : undefined],
    ['Insurance number', r.insurance_number],
    ['WC number', r.wc_number],
    [
      'Provider',
      joined([r.provider?.name ?? r.referring_provider, r.provider?.npi ? `NPI ${r.provider.npi}` : null]),
    ],
    ['Scheduling', r.scheduling_mode],
    [
      'Auto-book',
      auto
        ? joined([auto.status, auto.outcome, auto.strategy && `${auto.strategy} within ${auto.radius} mi`])
        : null,
    ],
    ['Preferred center', r.preferred_location?.name],
    [
      'Questionnaire',
      r.answered_medical_questionnaire === undefined
        ? undefined
        : r.answered_medical_questionnaire
          ? 'answered'
          : 'not answered',
    ],
  ]);
}

function renderPatient(view: View, p: Referral['patient']): void {
  view.section('Patient');
  if (!p) {
    view.out.push('  -');
    return;
  }
  const full = [p.first_name, p.middle_initial, p.last_name].filter(Boolean).join(' ') || p.name;
  view.pairs(
    [
      ['Name', full],
      ['Date of birth', patientDob(p as unknown as Record<string, unknown>)],
      ['Gender', p.gender],
      ['Phone', p.phone_number],
      ['Email', p.email],
      ['Address', address(p)],
    ],
    '  ',
  );
}

/** A link without its signature, marked: shown bare, a signed link does not open on its own. */
function shownLink(link: string): string {
  const b = bareLink(link);
  return b.signed ? `${b.url} (signed)` : b.url;
}

/** Why a procedure has no report: not in yet, with the visit's status (none ever once canceled or the exam was not completed). */
const notYet = (status: unknown) =>
  status === 'canceled' || status === 'exam_not_completed'
    ? `none (visit: ${status})`
    : `not yet (visit: ${typeof status === 'string' ? status : 'unknown'})`;

/** The report and image links and documents, one line each; links without their query string. */
// Whether each report and document is in; the links themselves are in the visits above and in
// `referrals documents`, which a line here names.
function renderDocuments(
  view: View,
  rows: DocumentRow[],
  r: Pick<Referral, 'reference' | 'id' | 'documents'>,
): void {
  const { reference, id, documents } = r;
  const { dim, v } = view;
  view.section(`Documents (${rows.length})`);
  if (rows.length === 0) view.out.push('  none yet');
  // Reports and images in columns (kind, accession, CPT, body part); a document names its own fields.
  const cells = rows.map((row) =>
    row.kind === 'document'
      ? [`document ${row.document_index}`, v(documentFields(row))]
      : [row.kind, row.accession_id || '-', row.cpt_code || '-', row.body_part || '-'].map((c) => v(c)),
  );
  const widths = [0, 1, 2].map((k) =>
    Math.max(0, ...cells.filter((c) => k === 0 || c.length > 2).map((c) => String(c[k]).length)),
  );
  const labels = cells.map((c) =>
    c
      .map((part, k) => String(part).padEnd(k < c.length - 1 ? (widths[k] ?? 0) : 0))
      .join('  ')
      .trimEnd(),
  );
  const w = Math.min(48, Math.max(0, ...labels.map((l) => l.length)));
  rows.forEach((row, i) => {
    view.out.push(safe`  ${labels[i]!.padEnd(w)}  ${row.link ? 'available' : dim(v(linkCell(row)))}`);
  });
  // A reference a shell would read as one word, else the id.
  const name = typeof reference === 'string' && /^[\w.-]+$/.test(reference) ? reference : v(id);
  if (rows.some((row) => row.link))
    view.out.push(safe`  ${dim(`Links: imaging referrals documents ${name}`)}`);
  const files = downloadFlags(rows, documents);
  if (files) view.out.push(safe`  ${dim(`Files: imaging referrals download ${name} ${files}`)}`);
}

/**
 * The download flags that fetch what is in: a report with a link (`--reports`), a document entry
 * with a link (`--documents`, found as download finds it), or both; undefined: nothing to fetch.
 */
function downloadFlags(rows: readonly DocumentRow[], entries: unknown): string | undefined {
  const reports = rows.some((row) => row.kind === 'report' && row.link);
  const documents = Array.isArray(entries) && entries.some((d) => documentLink(d) !== null);
  const flags = [reports ? '--reports' : '', documents ? '--documents' : ''].filter(Boolean);
  return flags.length > 0 ? flags.join(' ') : undefined;
}

function renderVisits(view: View, visits: Referral['visits']): void {
  const { b, dim, v } = view;
  view.section(`Visits (${visits.length})`);
  if (visits.length === 0) view.out.push('  none yet');
  visits.forEach((visit, i) => {
    view.out.push(safe`  ${b(`${i + 1}. ${v(visit.modality)}`)}  ${v(visit.status)}  ${dim(v(visit.id))}`);
    const loc = visit.location ?? {};
    view.pairs(
      [
        ['Start', view.when(visit.start_time)],
        ['Location', joined([loc.name, address(loc)])],
        ['Radiologists', visit.radiologist_group_name],
      ],
      '     ',
    );
    for (const proc of Array.isArray(visit.procedures) ? visit.procedures : []) {
      const parts = [
        proc.body_part,
        proc.laterality && proc.laterality !== 'not_present' ? proc.laterality : null,
        typeof proc.contrast === 'string' ? proc.contrast.replace(/_/g, ' ') : proc.contrast,
      ]
        .filter(Boolean)
        .map(v)
        .join(', ');
      view.out.push(safe`     - ${v(proc.procedure ?? parts)}${proc.procedure ? dim(` (${parts})`) : ''}`);
      view.pairs(
        [
          ['CPT', proc.cpt_code],
          ['Accession', proc.accession_id],
          ['Report', proc.report_link ? shownLink(proc.report_link) : notYet(visit.status)],
          ['Images', proc.image_link ? shownLink(proc.image_link) : undefined],
        ],
        '       ',
      );
    }
  });
}
