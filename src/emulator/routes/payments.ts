import type { Referral } from '../../api/types.js';
import { gate, notFound } from '../reply.js';
import { route } from '../router.js';

// The spec names these reads without paths or shapes: the emulator's guesses, gated.
export const routes = [
  referralRead('payments', 'payment read', payments),
  referralRead('notifications', 'notification read', notifications),
];

function referralRead(what: string, gated: string, answer: (r: Referral) => Record<string, unknown>) {
  return route('GET', `/api/v2/referrals/:id/${what}`, (c, s) => {
    const r = s.referrals.get(c.params.id!);
    if (!r) return notFound(c, 'Referral');
    gate(c, gated);
    return { status: 200, body: answer(r) };
  });
}

function payments(r: Referral): Record<string, unknown> {
  const procs = r.visits.flatMap((v) => v.procedures);
  return {
    payments: procs.slice(0, 1).map((p, i) => ({
      id: `00000000-0000-4000-8${String(i).padStart(3, '0')}-${r.id.slice(-12)}`,
      amount: 450.5,
      date: '2026-03-01',
      check_number: 'CHK-1001',
      procedures: [
        { order_id: r.id, accession_id: p.accession_id, cpt_code: p.cpt_code, description: p.procedure },
      ],
    })),
  };
}

function notifications(r: Referral): Record<string, unknown> {
  return {
    notifications: [
      {
        id: `00000000-0000-4000-9000-${r.id.slice(-12)}`,
        channel: 'sms',
        notification_type: 'appointment_reminder',
        status: 'delivered',
        created_at: '2026-01-05T14:00:00.000Z',
        updated_at: '2026-01-05T14:00:05.000Z',
        visit_id: r.visits[0]?.id ?? null,
      },
    ],
  };
}
