import { randomUUID } from 'node:crypto';
import { nestedDeeperThan } from '../api/client.js';
import type { Referral } from '../api/types.js';
import { UsageError } from '../errors.js';
import { inexactInteger } from '../util/integer.js';
import { count } from '../util/plural.js';
import {
  autoBookEvent,
  autoBookRequest,
  checkEvent,
  EVENT_NAMES,
  notificationEvent,
  visitStatusEvent,
} from './events.js';

/** Test events of the spec's shapes, synthetic, with fresh ids on every call. */
export type EventName = (typeof EVENT_NAMES)[number];

export function parseEventName(value: string): EventName {
  const v = value.trim().toLowerCase();
  if ((EVENT_NAMES as readonly string[]).includes(v)) return v as EventName;
  const near = EVENT_NAMES.find((n) => n.startsWith(v.split('.')[0] ?? '') && v !== '');
  throw new UsageError(
    `unknown event "${value}"`,
    `${near ? `Did you mean ${near}? ` : ''}Events: ${EVENT_NAMES.join(', ')}.`,
  );
}

function sampleReferral(now: Date): Referral {
  const u = randomUUID;
  const day = (d: number) => new Date(now.getTime() + d * 86_400_000).toISOString();
  return {
    id: u(),
    reference: 'R-TEST01',
    status: 'pending',
    line_of_business: 'personal_injury',
    payment_type: 'lien',
    incident_state: 'NV',
    visits: [sampleVisit(u(), day(3))],
    referring_provider: 'Dr. Test Provider',
    provider: { id: u(), name: 'Dr. Test Provider', npi: '1245319599' },
    law_firm: { id: u(), name: 'Test & Sample Law, LLP' },
    practice: { id: null, name: null },
    icd10_codes: [
      {
        id: u(),
        code: 'S83.242A',
        system: 'http://hl7.org/fhir/sid/icd-10-cm',
        short_description: 'Other tear of medial meniscus, current injury, left knee, initial encounter',
      },
    ],
    patient: {
      id: u(),
      identifier: { system: 'urn:example:patient-id', value: u() },
      name: 'Pat Test',
      first_name: 'Pat',
      last_name: 'Test',
      middle_initial: null,
      date_of_birth: '01/15/1980',
      date_of_birth_iso: '1980-01-15',
      email: 'pat.test@example.com',
      phone_number: '555-0100',
      gender: 'other',
      address_line_1: '1 Sample Street',
      address_line_2: null,
      city: 'Reno',
      state: 'NV',
      zip_code: '89501',
    },
    call_notes: [{ created_at: day(-1), notes: 'Test event: synthetic data.' }],
    documents: [],
    answered_medical_questionnaire: true,
    preferred_location: { id: null, name: null },
    scheduling_mode: 'anytime_anywhere',
    auto_book_request: null,
  };
}

function sampleVisit(id: string, startTime: string): Referral['visits'][number] {
  const u = randomUUID;
  return {
    id,
    modality: 'MRI',
    procedures: [
      {
        body_part: 'Knee',
        procedure: 'MRI Knee without contrast',
        contrast: 'without_contrast',
        laterality: 'left',
        cpt_code: '73721',
        cpt_code_id: u(),
        cpt_system: 'http://www.ama-assn.org/go/cpt',
        accession_id: 'ACC-TEST-1001',
        study_uid: null,
        series_uid: null,
        image_link: null,
        report_link: null,
      },
    ],
    status: 'ready_to_book',
    start_time: startTime,
    radiologist_group_name: 'Desert Radiology Partners',
    location: {
      id: u(),
      address_line_1: '100 Health Plaza',
      address_line_2: 'Suite 2',
      city: 'Reno',
      state: 'NV',
      zip_code: '89501',
      name: 'Test Imaging Center',
      npi: '1234567893',
    },
  };
}

export function sampleEvent(name: EventName, now: Date): Record<string, unknown> {
  const at = now.toISOString();
  const referral = sampleReferral(now);
  const visit = referral.visits[0]!;
  switch (name) {
    case 'visit.status_changed': {
      const previous = visit.status;
      visit.status = 'booked';
      return visitStatusEvent(referral, visit, previous, at);
    }
    case 'notification.status_changed': {
      const createdAt = new Date(now.getTime() - 60_000).toISOString();
      return notificationEvent(
        referral,
        { channel: 'sms', previous: 'sent', status: 'delivered', createdAt },
        at,
      );
    }
    case 'referral.auto_book_completed':
      visit.status = 'booked';
      referral.auto_book_request = autoBookRequest('booked', at);
      return autoBookEvent(referral, at);
  }
}

/** How deep a `--set` path (segments) or JSON value (levels of lists and objects) may go. */
const MAX_SET_DEPTH = 64;
const DOTTED = 'Use dotted names: --set referral.visits.0.status=booked';

/**
 * `--set PATH=VALUE`: a dotted path; the value is JSON when it reads as JSON, else the text. Missing
 * objects on the way are made; a path through a non-object is exit 2.
 */
export function applySet(event: Record<string, unknown>, path: string, raw: string): void {
  const parts = path.split('.');
  // Deeper than any event of the spec: a usage error, not a stack overflow later.
  if (parts.length > MAX_SET_DEPTH)
    throw new UsageError(
      `--set: the path has ${parts.length} segments; at most ${MAX_SET_DEPTH} are allowed`,
      DOTTED,
    );
  if (parts.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype'))
    throw new UsageError(`--set: "${path}" is not a field path`, DOTTED);
  let value: unknown;
  try {
    // An integer a double cannot hold exactly keeps its digits, as a string.
    value = inexactInteger(raw.trim()) ? raw : JSON.parse(raw);
  } catch {
    value = raw;
  }
  if (nestedDeeperThan(value, MAX_SET_DEPTH))
    throw new UsageError(
      `--set ${path.length > 60 ? `${path.slice(0, 60)}…` : path}: the JSON value nests more than ${MAX_SET_DEPTH} levels deep`,
      'Give a flatter value (the events of the spec nest a few levels).',
    );
  let node: unknown = event;
  for (const [i, key] of parts.entries()) {
    const last = i === parts.length - 1;
    const where = parts.slice(0, i).join('.') || 'the event';
    let k: string | number = key;
    if (Array.isArray(node)) {
      if (!/^\d+$/.test(key))
        throw new UsageError(`--set ${path}: ${where} is a list; give an index (0, 1, …), not "${key}"`);
      k = Number(key);
      if (k > node.length)
        throw new UsageError(
          `--set ${path}: ${where} has ${count(node.length, 'item')}; index ${k} is past the end`,
        );
    } else if (typeof node !== 'object' || node === null)
      throw new UsageError(
        `--set ${path}: ${where} is ${node === null ? 'null' : typeof node}, not an object`,
      );
    const container = node as Record<string | number, unknown>;
    if (last) container[k] = value;
    else node = container[k] ??= {};
  }
}

/** After `--set status=X` the rest of the event follows X, unless those fields were set too. */
export function followStatus(event: Record<string, unknown>, setPaths: readonly string[]): void {
  if (!setPaths.includes('status') || typeof event.status !== 'string') return;
  const status = event.status;
  const touched = (path: string) => setPaths.some((p) => p === path || path.startsWith(`${p}.`));
  const changes = event.changes as { status?: unknown } | undefined;
  if (!touched('changes.status.1') && Array.isArray(changes?.status) && changes.status.length === 2)
    changes.status[1] = status;
  if (event.event_name === 'visit.status_changed') {
    const visits = (event.referral as { visits?: unknown } | undefined)?.visits;
    if (Array.isArray(visits)) {
      const i = visits.findIndex((v) => v?.id === event.visit_id);
      if (i >= 0 && !touched(`referral.visits.${i}.status`)) visits[i].status = status;
    }
  }
  if (event.event_name === 'notification.status_changed' && !touched('notification.status')) {
    const n = event.notification as { status?: unknown } | undefined;
    if (n && typeof n === 'object') n.status = status;
  }
}

/** The sample event with the --set overrides applied, its exact body bytes, and how it left the spec's shape. */
export function sampleWithSet(
  name: EventName,
  now: Date,
  set: ReadonlyArray<[string, string]>,
): { event: Record<string, unknown>; body: Buffer; problems: string[] } {
  const event = sampleEvent(name, now);
  for (const [path, value] of set) applySet(event, path, value);
  followStatus(
    event,
    set.map(([path]) => path),
  );
  const body = Buffer.from(JSON.stringify(event), 'utf8');
  return { event, body, problems: checkEvent(name, body).problems };
}
