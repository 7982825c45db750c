import type { ReferralPayment } from '../api/types.js';
import { defineResource } from './schema.js';

type Allocation = ReferralPayment['procedures'][number];

/** What a payment paid for: "73721 MRI knee (ACC-1001)", one per procedure. */
const allocation = (p: Allocation) =>
  [p.cpt_code, p.description, p.accession_id ? `(${p.accession_id})` : null].filter(Boolean).join(' ');

const paymentProcedures = (r: ReferralPayment) =>
  Array.isArray(r.procedures)
    ? r.procedures.length === 0
      ? 'not allocated'
      : r.procedures.map(allocation).join('; ')
    : null;

/** Dollars as received: 450.5 -> 450.50 (the API sends a number of dollars). */
const dollars = (amount: unknown) =>
  typeof amount === 'number' && Number.isFinite(amount) ? amount.toFixed(2) : amount;

// At a narrow terminal (output/table.ts): date, amount and check number whole, what was paid for
// wraps, the payment's id (no command takes it) is left out first; never cut.
export const PAYMENTS = defineResource<ReferralPayment>(
  { id: true, amount: true, date: true, check_number: true, procedures: true },
  [
    { header: 'Date', field: 'date', show: (d) => d ?? 'no date', priority: 1, fit: 'keep' },
    { header: 'Amount', get: (r) => dollars(r.amount), priority: 2, fit: 'keep' },
    { header: 'Check number', field: 'check_number', priority: 3, fit: 'keep' },
    { header: 'Procedures', get: paymentProcedures, priority: 4, min: 16 },
    { header: 'ID', field: 'id', priority: 5, fit: 'keep' },
  ],
);
