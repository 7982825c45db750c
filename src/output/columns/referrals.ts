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
  // At a narrow terminal (output/table.ts): reference and id whole (the id is what `referrals get`
  // takes), the patient's name wraps, the least read columns are left out first.
  { header: 'Reference', get: (r) => r.reference, priority: 1, fit: 'keep' },
  { header: 'Status', get: (r) => r.status, priority: 4, fit: 'keep' },
  { header: 'Line of business', get: (r) => r.line_of_business, priority: 7, fit: 'keep' },
  { header: 'Patient', get: patientName, priority: 3, min: 10 },
  {
    header: 'Visits',
    get: (r) => (Array.isArray(r.visits) ? r.visits.length : null),
    priority: 6,
    fit: 'keep',
  },
  { header: 'Most advanced visit', get: (r) => latestVisitStatus(r.visits), priority: 5, fit: 'keep' },
  { header: 'ID', get: (r) => r.id, priority: 2, fit: 'keep' },
];
