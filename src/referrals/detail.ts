import type { Referral } from '../api/types.js';
import { latestVisitStatus, patientDob } from '../export/rows.js';
import { clean, joinSafe, type SafeText, safe, style } from '../output/text.js';
import { peopleTime } from '../util/time.js';

/**
 * The human view of one referral: header, patient, then each visit with its procedures, then
 * ICD-10 codes and call notes. Times in the user's time zone. Unknown statuses appear as they are.
 */
export function renderReferral(
  r: Referral,
  opts: { color: boolean; timeZone: string | undefined },
): SafeText {
  // Every value from the server passes clean() (one line, escapes visible) via v() or safe`…`.
  const b = (s: unknown) => style('bold', s, opts.color);
  const dim = (s: unknown) => style('dim', s, opts.color);
  const out: Array<string | SafeText> = [];
  const v = (x: unknown): string =>
    x === null || x === undefined || x === '' ? '-' : clean(String(x)).replace(/\s+/g, ' ').trim() || '-';
  const pairs = (rows: Array<[string, unknown]>, indent = '') => {
    const shown = rows.filter(([, value]) => value !== undefined);
    const w = Math.max(...shown.map(([k]) => k.length)) + 1;
    for (const [k, value] of shown) out.push(safe`${indent}${dim(`${k}:`.padEnd(w))}  ${v(value)}`);
  };
  const name = (o: { name?: unknown; id?: unknown } | undefined) =>
    o && (o.name || o.id) ? v(o.name ?? o.id) : '-';
  const when = (iso: unknown) => peopleTime(iso, { timeZone: opts.timeZone });

  out.push(safe`${b(`Referral ${v(r.reference)}`)}  ${dim(v(r.id))}`);
  pairs([
    ['Status', r.status],
    ['Most advanced visit', latestVisitStatus(r.visits)],
    ['Line of business', r.line_of_business],
    ['Payment type', r.payment_type],
    ['Incident state', r.incident_state],
    ['Law firm', name(r.law_firm)],
    ['Practice', name(r.practice)],
    ...(r.payor ? ([['Payor', name(r.payor)]] as Array<[string, unknown]>) : []),
    ...(r.insurance_number !== undefined
      ? ([['Insurance number', r.insurance_number]] as Array<[string, unknown]>)
      : []),
    ...(r.wc_number !== undefined ? ([['WC number', r.wc_number]] as Array<[string, unknown]>) : []),
    [
      'Provider',
      [r.provider?.name ?? r.referring_provider, r.provider?.npi ? `NPI ${r.provider.npi}` : null]
        .filter(Boolean)
        .join(', '),
    ],
    ['Scheduling', r.scheduling_mode],
    [
      'Auto-book',
      r.auto_book_request
        ? [
            r.auto_book_request.status,
            r.auto_book_request.outcome,
            r.auto_book_request.strategy &&
              `${r.auto_book_request.strategy} within ${r.auto_book_request.radius} mi`,
          ]
            .filter(Boolean)
            .join(', ')
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

  const p = r.patient;
  out.push('', b('Patient'));
  if (p) {
    const full = [p.first_name, p.middle_initial, p.last_name].filter(Boolean).join(' ') || p.name;
    pairs(
      [
        ['Name', full],
        ['Date of birth', patientDob(p as unknown as Record<string, unknown>)],
        ['Gender', p.gender],
        ['Phone', p.phone_number],
        ['Email', p.email],
        [
          'Address',
          [p.address_line_1, p.address_line_2, [p.city, p.state].filter(Boolean).join(', '), p.zip_code]
            .filter(Boolean)
            .join(', '),
        ],
      ],
      '  ',
    );
  } else out.push('  -');

  const visits = Array.isArray(r.visits) ? r.visits : [];
  out.push('', b(`Visits (${visits.length})`));
  if (visits.length === 0) out.push('  none yet');
  visits.forEach((visit, i) => {
    out.push(safe`  ${b(`${i + 1}. ${v(visit.modality)}`)}  ${v(visit.status)}  ${dim(v(visit.id))}`);
    const loc = visit.location ?? {};
    pairs(
      [
        ['Start', when(visit.start_time)],
        [
          'Location',
          [
            loc.name,
            loc.address_line_1,
            loc.address_line_2,
            [loc.city, loc.state].filter(Boolean).join(', '),
            loc.zip_code,
          ]
            .filter(Boolean)
            .join(', '),
        ],
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
      out.push(safe`     - ${v(proc.procedure ?? parts)}${proc.procedure ? dim(` (${parts})`) : ''}`);
      pairs(
        [
          ['CPT', proc.cpt_code],
          ['Accession', proc.accession_id],
          ...(proc.report_link ? ([['Report', proc.report_link]] as Array<[string, unknown]>) : []),
          ...(proc.image_link ? ([['Images', proc.image_link]] as Array<[string, unknown]>) : []),
        ],
        '       ',
      );
    }
  });

  const codes = Array.isArray(r.icd10_codes) ? r.icd10_codes : [];
  out.push('', b(`ICD-10 codes (${codes.length})`));
  for (const c of codes) out.push(safe`  ${v(c.code).padEnd(9)} ${v(c.short_description)}`);
  if (codes.length === 0) out.push('  none');

  const notes = Array.isArray(r.call_notes) ? r.call_notes : [];
  out.push('', b(`Call notes (${notes.length})`));
  for (const n of notes) out.push(safe`  ${v(when(n.created_at))}  ${v(n.notes)}`);
  if (notes.length === 0) out.push('  none');
  return safe`${joinSafe(out, '\n')}\n`;
}
