import type { Referral } from '../../api/types.js';
import { isLoopbackHost } from '../../api/url.js';
import { autoBookEvent, autoBookRequest, notificationEvent } from '../../webhook/events.js';
import { moveVisit } from '../advance.js';
import { jsonBody, notFound } from '../reply.js';
import { route } from '../router.js';
import type { Ctx, EmulatorState, Reply } from '../types.js';

/**
 * Mock-only event triggers: each changes a referral as the service would and sends the signed event.
 * Notification and auto-book events exist only as deliveries: 409 with no webhook URL.
 */
export const routes = [
  route('POST', '/__mock/referrals/:id/visits/:visitId/advance', (c, s) =>
    withReferral(c, s, 'optional', (referral, input, now) => {
      const to = typeof input.status === 'string' ? input.status : undefined;
      const moved = moveVisit(s, referral, c.params.visitId!, to, now);
      if (!moved) return notFound(c, 'Visit');
      const { sent, status } = moved;
      if (!sent) return { status: 200, body: { event_id: null, url: null, signed: false, status } };
      return { status: 202, body: { ...sent, status } };
    }),
  ),

  route('POST', '/__mock/referrals/:id/notifications', (c, s) =>
    withReferral(c, s, 'required', (referral, input, now) => {
      const channel = input.channel === 'email' ? 'email' : 'sms';
      const status = typeof input.status === 'string' ? input.status : 'delivered';
      const previous =
        typeof input.previous === 'string' ? input.previous : input.previous === null ? null : 'dispatched';
      const sent = s.webhooks.send(
        notificationEvent(referral, { channel, previous, status, createdAt: now }, now),
      );
      return { status: 202, body: sent };
    }),
  ),

  route('POST', '/__mock/referrals/:id/auto_book', (c, s) =>
    withReferral(c, s, 'per-request', (referral, input, now, perRequest) => {
      const updated = structuredClone(referral);
      const outcome = typeof input.outcome === 'string' ? input.outcome : 'booked';
      updated.auto_book_request = autoBookRequest(outcome, now);
      s.referrals.put(updated);
      const sent = s.webhooks.send(autoBookEvent(updated, now), perRequest);
      return { status: 202, body: sent };
    }),
  ),
];

function withReferral(
  c: Ctx,
  s: EmulatorState,
  needsUrl: 'optional' | 'required' | 'per-request',
  fn: (
    referral: Referral,
    input: Record<string, unknown>,
    now: string,
    perRequest: string | undefined,
  ) => Reply,
): Reply {
  const referral = s.referrals.get(c.params.id!);
  if (!referral) return notFound(c, 'Referral');
  const input = (jsonBody(c) ?? {}) as Record<string, unknown>;
  const perRequest = typeof input.webhook_url === 'string' ? input.webhook_url : undefined;
  // Whoever can reach this route names the URL: the emulator posts for them only to a receiver on
  // this machine (`webhook listen`), never to another host.
  if (perRequest !== undefined && !isLocalReceiver(perRequest)) {
    return {
      status: 422,
      body: {
        error:
          'webhook_url must be a receiver on this machine (http://127.0.0.1:PORT/…); the emulator posts nowhere else',
      },
    };
  }
  if (needsUrl !== 'optional' && !s.webhooks.configured && !(needsUrl === 'per-request' && perRequest)) {
    return { status: 409, body: { error: 'no webhook URL: start the emulator with --webhook-url URL' } };
  }
  return fn(referral, input, new Date().toISOString(), perRequest);
}

function isLocalReceiver(url: string): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && isLoopbackHost(u.hostname);
  } catch {
    return false;
  }
}
