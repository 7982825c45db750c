import type { Referral } from '../../api/types.js';
import { EVENT_NAMES } from '../../webhook/events.js';
import { type EventName, sampleEvent } from '../../webhook/sample.js';
import { moveVisit } from '../advance.js';
import { uuidFrom } from '../data/random.js';
import { createdReferral } from '../data/referral-input.js';
import { invalid, jsonBody, notFound } from '../reply.js';
import { route } from '../router.js';
import type { EmulatorState, Reply } from '../types.js';

/**
 * The sandbox's own tools, at the paths the CLI guesses (the spec names them without paths or shapes):
 * a visit moved to a status (visit.status_changed to the group webhook, signed), a fixture referral
 * made by name, and a test delivery of any event.
 */

/** Fixture names, and the visit statuses of the referral each makes. */
const FIXTURES: Readonly<Record<string, readonly string[]>> = {
  referral: ['pending'],
  ready_to_book: ['ready_to_book'],
  booked: ['booked'],
  report_uploaded: ['report_uploaded'],
  two_visits: ['pending', 'pending'],
};

export const routes = [
  route('POST', '/api/v2/sandbox/visits/:id/advance', (c, s) => {
    const input = (jsonBody(c) ?? {}) as Record<string, unknown>;
    if (typeof input.status !== 'string' || input.status.trim() === '')
      return invalid(c, ["status can't be blank"]);
    const referral = referralOfVisit(s, c.params.id!);
    if (!referral) return notFound(c, 'Visit');
    const moved = moveVisit(s, referral, c.params.id!, input.status.trim().toLowerCase());
    if (!moved) return notFound(c, 'Visit');
    const [previous, status] = moved.status;
    return {
      status: 200,
      body: {
        visit_id: c.params.id,
        referral_id: referral.id,
        status,
        changes: { status: [previous, status] },
      },
    };
  }),

  route('POST', '/api/v2/sandbox/fixtures', (c, s) => {
    const input = (jsonBody(c) ?? {}) as Record<string, unknown>;
    const name = input.name === undefined ? 'referral' : input.name;
    if (typeof name !== 'string' || !Object.hasOwn(FIXTURES, name))
      return invalid(c, [`name must be one of ${Object.keys(FIXTURES).join(', ')}`]);
    return { status: 201, body: fixture(s, name) };
  }),

  route('POST', '/api/v2/sandbox/test_webhook', (c, s) => {
    const input = (jsonBody(c) ?? {}) as Record<string, unknown>;
    const name = input.event_name === undefined ? 'visit.status_changed' : input.event_name;
    if (typeof name !== 'string' || !(EVENT_NAMES as readonly string[]).includes(name))
      return invalid(c, [`event_name must be one of ${EVENT_NAMES.join(', ')}`]);
    return testDelivery(s, name as EventName);
  }),
];

/** The referral holding a visit: the emulator keeps no visit index, so the referrals are read in turn. */
function referralOfVisit(s: EmulatorState, visitId: string): Referral | undefined {
  for (let i = 0; i < s.referrals.total; i++) {
    const r = s.referrals.at(i);
    if (r.visits?.some((v) => v.id === visitId)) return r;
  }
  return undefined;
}

function fixture(s: EmulatorState, name: string): Referral {
  const statuses = FIXTURES[name]!;
  const knee = s.data.cpt.find((m) => m.code === '73721' && m.body_part_name === 'Knee');
  const newId = () => uuidFrom(s.idRand);
  const fields = {
    line_of_business: 'personal_injury',
    incident_state: 'NV',
    patient: { first_name: 'Sandbox', last_name: `Fixture ${name}`, date_of_birth_iso: '1980-01-15' },
    visits: statuses.map(() => ({ modality: 'MRI', procedures: [{ cpt_code_id: knee?.id }] })),
  };
  const reference = `R-${String(900000 + s.referrals.total).padStart(6, '0')}`;
  const referral = createdReferral(fields, newId(), reference, { ref: s.data, lawFirms: s.lawFirms, newId });
  referral.visits.forEach((v, i) => {
    v.status = statuses[i]!;
  });
  s.referrals.add(referral);
  return referral;
}

function testDelivery(s: EmulatorState, name: EventName): Reply {
  if (!s.webhooks.configured)
    return { status: 409, body: { error: 'no webhook URL: start the emulator with --webhook-url URL' } };
  const sent = s.webhooks.send(sampleEvent(name, new Date()));
  return { status: 202, body: { event_name: name, ...sent } };
}
