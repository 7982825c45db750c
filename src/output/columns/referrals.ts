import type { Referral } from '../../api/types.js';
import { latestVisitStatus } from '../../export/rows.js';
import type { Column } from '../render.js';

const patientName = (r: Referral) => {
  const p = r.patient;
  if (!p) return null;
  if (p.last_name || p.first_name) return [p.last_name, p.first_name].filter(Boolean).join(', ');
  return p.name ?? null;
};

export const referralColumns: Column<Referral>[] = [
  { header: 'Reference', get: (r) => r.reference },
  { header: 'Status', get: (r) => r.status },
  { header: 'Line of business', get: (r) => r.line_of_business },
  { header: 'Patient', get: patientName },
  { header: 'Visits', get: (r) => (Array.isArray(r.visits) ? r.visits.length : null) },
  { header: 'Most advanced visit', get: (r) => latestVisitStatus(r.visits) },
  { header: 'ID', get: (r) => r.id },
];
