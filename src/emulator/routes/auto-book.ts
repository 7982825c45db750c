import type { AutoBookRequest, Referral } from '../../api/types.js';
import { isLoopbackHost } from '../../api/url.js';
import { after } from '../../util/timer.js';
import { autoBookEvent } from '../../webhook/events.js';
import { uuidFrom } from '../data/random.js';
import { gate, invalid, jsonBody, notFound } from '../reply.js';
import { route } from '../router.js';
import type { EmulatorState } from '../types.js';

/** How long an attempt stays `processing` unless the emulator is told otherwise (`autoBookDelayMs`). */
export const AUTO_BOOK_DELAY_MS = 2000;

const STRATEGIES = ['closest', 'soonest', 'closest_soonest'];
const OUTCOMES = ['no_availability', 'booking_failed', 'contacted_for_booking', 'booked'] as const;

/**
 * The outcome an attempt ends with: named in its address ("1 no_availability Way", "booking failed"),
 * so a test or a demo chooses it; booked otherwise.
 */
export function outcomeFor(address: string | null): (typeof OUTCOMES)[number] {
  const words = (address ?? '').toLowerCase().replace(/[\s-]+/g, '_');
  return OUTCOMES.find((o) => words.includes(o)) ?? 'booked';
}

// The spec names the submission without its path or body: the emulator's guess, gated as the spec says.
export const routes = [
  route('POST', '/api/v2/referrals/:id/auto_book', (c, s) => {
    const referral = s.referrals.get(c.params.id!);
    if (!referral) return notFound(c, 'Referral');
    gate(c, 'auto-book');
    const body = jsonBody(c) as Record<string, unknown> | undefined;
    const input = (body?.auto_book_request ?? body) as Record<string, unknown> | undefined;
    const errors = problems(input, s);
    if (errors.length > 0) return invalid(c, errors);
    const request: AutoBookRequest = {
      id: uuidFrom(s.idRand),
      status: 'processing',
      strategy: String(input!.strategy),
      radius: Number(input!.radius),
      address: typeof input!.address === 'string' ? input!.address : null,
      outcome: null,
      error: null,
      completed_at: null,
    };
    s.referrals.put({ ...structuredClone(referral), auto_book_request: request });
    const webhookUrl = typeof input!.webhook_url === 'string' ? input!.webhook_url : undefined;
    // --auto-book-delay may be longer than a Node timer holds: `after` waits it out in steps.
    after(
      s.options.autoBookDelayMs ?? AUTO_BOOK_DELAY_MS,
      () => complete(s, referral.id, request.id, webhookUrl),
      {
        unref: true,
      },
    );
    return { status: 202, body: { auto_book_request: request } };
  }),
];

function problems(input: Record<string, unknown> | undefined, s: EmulatorState): string[] {
  if (typeof input !== 'object' || input === null) return ['Body must be a JSON object'];
  const errors: string[] = [];
  if (!STRATEGIES.includes(String(input.strategy)))
    errors.push(`Strategy must be one of ${STRATEGIES.join(', ')}`);
  const r = input.radius;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1 || r > 250)
    errors.push('Radius must be an integer from 1 to 250');
  if (input.address !== undefined && input.address !== null && typeof input.address !== 'string')
    errors.push('Address must be a string');
  if (input.webhook_url !== undefined && !allowedReceiver(input.webhook_url, s))
    errors.push(
      "Webhook url must be on this machine, at the port of the emulator's --webhook-url or one allowed with --allow-webhook-port: the emulator posts nowhere else",
    );
  return errors;
}

/** The attempt reaches its terminal result: completed, its outcome set, the event sent where it goes. */
function complete(s: EmulatorState, referralId: string, requestId: string, webhookUrl: string | undefined) {
  const current = s.referrals.get(referralId);
  // A newer request replaced this one: it completes on its own.
  if (!current || current.auto_book_request?.id !== requestId) return;
  const now = new Date().toISOString();
  const outcome = outcomeFor(current.auto_book_request.address);
  const done: Referral = {
    ...structuredClone(current),
    auto_book_request: {
      ...current.auto_book_request,
      status: 'completed',
      outcome,
      error: outcome === 'booking_failed' ? 'The imaging center did not confirm the slot' : null,
      completed_at: now,
    },
  };
  s.referrals.put(done);
  if (webhookUrl || s.webhooks.configured) s.webhooks.send(autoBookEvent(done, now), webhookUrl);
}

/**
 * Whoever reaches this route names the URL: the emulator posts only to a loopback receiver it was
 * told of (its --webhook-url's port, or --allow-webhook-port), never to any port of this machine.
 */
function allowedReceiver(url: unknown, s: EmulatorState): boolean {
  const u = loopbackUrl(url);
  if (!u) return false;
  const configured = loopbackUrl(s.options.webhookUrl);
  const ports = [...(s.options.webhookPorts ?? []), ...(configured ? [portOf(configured)] : [])];
  return ports.includes(portOf(u));
}

function loopbackUrl(url: unknown): URL | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && isLoopbackHost(u.hostname) ? u : undefined;
  } catch {
    return undefined;
  }
}

const portOf = (u: URL) => Number(u.port || (u.protocol === 'https:' ? 443 : 80));
