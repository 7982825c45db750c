import { randomUUID } from 'node:crypto';
import type { AutoBookRequest, Referral, Visit } from '../api/types.js';
import { isUuid } from '../cli/args.js';
import { count } from '../util/plural.js';

/** What the spec's Events section requires of each event, checked after the signature. */

export const EVENT_NAMES = [
  'visit.status_changed',
  'notification.status_changed',
  'referral.auto_book_completed',
] as const;
export const UNSIGNED_BY_DESIGN = 'referral.auto_book_completed';

/** The events as the service sends them (the emulator's and `webhook send`'s). */
export function visitStatusEvent(referral: Referral, visit: Visit, previous: string, at: string) {
  return {
    event_id: randomUUID(),
    event_name: 'visit.status_changed',
    status: visit.status,
    changes: { status: [previous, visit.status] },
    visit_id: visit.id,
    occurred_at: at,
    referral,
  };
}

export function notificationEvent(
  referral: Referral,
  n: { channel: string; previous: string | null; status: string; createdAt: string },
  at: string,
) {
  return {
    event_id: randomUUID(),
    event_name: 'notification.status_changed',
    referral_id: referral.id,
    status: n.status,
    changes: { status: [n.previous, n.status] },
    notification: {
      id: randomUUID(),
      channel: n.channel,
      notification_type: 'appointment_reminder',
      status: n.status,
      created_at: n.createdAt,
      updated_at: at,
      visit_id: referral.visits[0]?.id ?? null,
    },
    occurred_at: at,
  };
}

export function autoBookRequest(outcome: string, at: string): AutoBookRequest {
  return {
    id: randomUUID(),
    status: 'completed',
    strategy: 'closest_soonest',
    radius: 25,
    address: null,
    outcome,
    error: null,
    completed_at: at,
  };
}

/** Sent unsigned, without an event_id: the request's id is the delivery's. */
export function autoBookEvent(referral: Referral, at: string) {
  const request = referral.auto_book_request;
  return { event_name: UNSIGNED_BY_DESIGN, occurred_at: at, auto_book_request: request, referral };
}

export interface EventSummary {
  event: string | undefined;
  id: string | undefined;
  eventId: string | undefined;
  visitId?: string | undefined;
  notification?: string | undefined;
  outcome?: string | undefined;
  reference?: string | undefined;
  change?: string | undefined;
  occurredAt?: string | undefined;
}

interface EventCheck {
  summary: EventSummary;
  problems: string[];
  warnings: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isDateTime = (v: unknown) =>
  typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v) && !Number.isNaN(Date.parse(v));

export function checkEvent(headerEvent: string | undefined, body: Buffer): EventCheck {
  const problems: string[] = [];
  const warnings: string[] = [];
  const summary: EventSummary = { event: headerEvent, id: undefined, eventId: undefined };
  let data: unknown;
  // A BOM is part of the signed bytes, not of the JSON: read without it, and noted.
  const bom = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  if (bom)
    warnings.push(
      'the body starts with a UTF-8 byte order mark (BOM, EF BB BF); it is part of the signed bytes, but strict JSON parsers refuse it',
    );
  try {
    data = JSON.parse(body.subarray(bom ? 3 : 0).toString('utf8'));
  } catch {
    problems.push('the body is not valid JSON');
    return { summary, problems, warnings };
  }
  if (!isObj(data)) {
    problems.push('the body is JSON but not an object');
    return { summary, problems, warnings };
  }
  const name = typeof data.event_name === 'string' ? data.event_name : undefined;
  summary.event = name ?? headerEvent;
  if (name === undefined) problems.push('event_name is missing from the body');
  if (headerEvent === undefined) problems.push('the event header is missing');
  else if (name !== undefined && headerEvent !== name)
    problems.push(`the event header says "${headerEvent}" but event_name is "${name}"`);

  const check = name === undefined ? undefined : CHECKS.get(name);
  if (check) check({ data, problems, warnings, summary });
  else if (name !== undefined) {
    warnings.push(`"${name}" is not an event this tool knows; its fields were not checked`);
    if (typeof data.event_id === 'string') summary.eventId = data.event_id;
  }
  summary.id ??= summary.eventId;
  return { summary, problems, warnings };
}

interface Checker {
  data: Obj;
  problems: string[];
  warnings: string[];
  summary: EventSummary;
}

function need(
  c: Checker,
  field: string,
  ok: (v: unknown) => boolean,
  what: string,
  obj = c.data,
  prefix = '',
) {
  const v = obj[field];
  if (v === undefined) c.problems.push(`${prefix}${field} is missing`);
  else if (!ok(v)) c.problems.push(`${prefix}${field} is not ${what}`);
  return v;
}

const str = (v: unknown) => typeof v === 'string';
const uuid = (v: unknown) => typeof v === 'string' && isUuid(v);
const maybeString = (v: unknown) => (typeof v === 'string' ? v : undefined);
const referralRef = (r: unknown) => (isObj(r) && typeof r.reference === 'string' ? r.reference : undefined);

function checkChanges(c: Checker, allowNullFirst: boolean): void {
  const { data, problems } = c;
  const changes = data.changes;
  if (changes === undefined) problems.push('changes is missing');
  else if (!isObj(changes) || !Array.isArray(changes.status))
    problems.push('changes.status is missing or not an array');
  else if (changes.status.length !== 2)
    problems.push(
      `changes.status has ${count(changes.status.length, 'item')}; it must have exactly 2 [previous, current]`,
    );
  else if (
    !(typeof changes.status[0] === 'string' || (allowNullFirst && changes.status[0] === null)) ||
    typeof changes.status[1] !== 'string'
  )
    problems.push('changes.status items are not status strings');
  else if (typeof data.status === 'string' && changes.status[1] !== data.status) {
    problems.push(`status is "${data.status}" but changes.status ends in "${String(changes.status[1])}"`);
  }
  c.summary.change =
    isObj(changes) && Array.isArray(changes.status)
      ? changes.status.map((s) => (s === null ? '(none)' : String(s))).join(' -> ')
      : undefined;
}

function checkVisitEvent(c: Checker): void {
  const { summary } = c;
  summary.eventId = maybeString(need(c, 'event_id', uuid, 'a UUID'));
  need(c, 'status', str, 'a string');
  checkChanges(c, false);
  summary.visitId = maybeString(need(c, 'visit_id', uuid, 'a UUID'));
  summary.occurredAt = maybeString(need(c, 'occurred_at', isDateTime, 'a date-time'));
  const referral = need(c, 'referral', isObj, 'an object');
  summary.reference = referralRef(referral);
  if (isObj(referral) && Array.isArray(referral.visits) && summary.visitId) {
    if (!referral.visits.some((v) => isObj(v) && v.id === summary.visitId))
      c.warnings.push('visit_id is not among referral.visits');
  }
}

function checkNotificationEvent(c: Checker): void {
  c.summary.eventId = maybeString(need(c, 'event_id', uuid, 'a UUID'));
  need(c, 'referral_id', uuid, 'a UUID');
  need(c, 'status', str, 'a string');
  checkChanges(c, true);
  const n = need(c, 'notification', isObj, 'an object');
  if (isObj(n)) {
    for (const f of ['id', 'channel', 'status', 'created_at', 'updated_at'])
      need(c, f, (v) => v !== null, 'set', n, 'notification.');
    c.summary.notification = [n.channel, n.notification_type].filter((x) => typeof x === 'string').join(' ');
  }
  c.summary.occurredAt = maybeString(need(c, 'occurred_at', isDateTime, 'a date-time'));
}

function checkAutoBookEvent(c: Checker): void {
  c.summary.occurredAt = maybeString(need(c, 'occurred_at', isDateTime, 'a date-time'));
  const a = need(c, 'auto_book_request', isObj, 'an object');
  if (isObj(a)) {
    need(c, 'id', uuid, 'a UUID', a, 'auto_book_request.');
    need(c, 'status', str, 'a string', a, 'auto_book_request.');
    c.summary.id = maybeString(a.id);
    c.summary.outcome = maybeString(a.outcome);
  }
  c.summary.reference = referralRef(need(c, 'referral', isObj, 'an object'));
}

const CHECKS = new Map<string, (c: Checker) => void>([
  ['visit.status_changed', checkVisitEvent],
  ['notification.status_changed', checkNotificationEvent],
  ['referral.auto_book_completed', checkAutoBookEvent],
]);
