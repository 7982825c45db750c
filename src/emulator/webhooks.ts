import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { PROGRESS } from '../referrals/progress.js';
import { after } from '../util/timer.js';
import { DEFAULT_HEADERS, type DigestEncoding, signatureHeaderValue } from '../webhook/sign.js';

/** Outbound webhooks, signed as the spec says, retried with the same event_id, logged for /__mock/deliveries. */

interface WebhookConfig {
  url?: string | undefined;
  key?: Buffer | undefined;
  encoding: DigestEncoding;
  retryDelayMs: number;
  maxAttempts: number;
}

interface Delivery {
  url: string;
  body: Buffer;
  name: string;
  eventId: string | null;
  signed: boolean;
}

interface DeliveryLog {
  event_name: string;
  event_id: string | null;
  url: string;
  attempt: number;
  signed: boolean;
  status: number | null;
  error: string | null;
  at: string;
}

export class WebhookSender {
  readonly log: DeliveryLog[] = [];
  /** What cancels each pending retry (--webhook-retry-ms may double past what a Node timer holds). */
  private readonly timers = new Set<() => void>();
  private pending = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly config: WebhookConfig) {}

  get configured(): boolean {
    return Boolean(this.config.url);
  }

  /** Sends an event to the group URL (signed), or to a per-request URL (unsigned: spec, auto-book). */
  send(
    event: Record<string, unknown>,
    perRequestUrl?: string,
  ): { event_id: string | null; url: string; signed: boolean } {
    const url = perRequestUrl ?? this.config.url;
    if (!url) throw new Error('no webhook URL');
    const signed = perRequestUrl === undefined && this.config.key !== undefined;
    const eventId = typeof event.event_id === 'string' ? event.event_id : null;
    const body = Buffer.from(JSON.stringify(event));
    this.pending++;
    void this.attempt({ url, body, name: String(event.event_name), eventId, signed }, 1);
    return { event_id: eventId, url, signed };
  }

  private async attempt(d: Delivery, n: number): Promise<void> {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': 'Service-Webhook/1.0',
      [DEFAULT_HEADERS.event]: d.name,
      'Content-Length': String(d.body.length),
    };
    const { key, encoding } = this.config;
    if (d.signed && key) {
      // Signed afresh on every attempt, so a late retry still passes a receiver's tolerance.
      const ts = String(Math.floor(Date.now() / 1000));
      headers[DEFAULT_HEADERS.timestamp] = ts;
      headers[DEFAULT_HEADERS.signature] = signatureHeaderValue(key, ts, d.body, encoding);
    }
    const result = await post(d.url, headers, d.body);
    const status = typeof result === 'number' ? result : null;
    this.log.push({
      event_name: d.name,
      event_id: d.eventId,
      url: d.url,
      attempt: n,
      signed: d.signed,
      status,
      error: typeof result === 'string' ? result : null,
      at: new Date().toISOString(),
    });
    const ok = status !== null && status >= 200 && status < 300;
    if (!ok && n < this.config.maxAttempts) {
      const cancel = after(this.config.retryDelayMs * 2 ** (n - 1), () => {
        this.timers.delete(cancel);
        void this.attempt(d, n + 1);
      });
      this.timers.add(cancel);
      return;
    }
    this.pending--;
    if (this.pending === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  idle(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((r) => this.idleWaiters.push(r));
  }

  stop(): void {
    for (const cancel of this.timers) cancel();
    this.timers.clear();
  }
}

/** The status of the answer, or why there was none. */
function post(url: string, headers: Record<string, string>, body: Buffer): Promise<number | string> {
  return new Promise((resolve) => {
    const u = URL.canParse(url) ? new URL(url) : undefined;
    if (!u) return resolve(`bad URL ${url}`);
    // Node would send to port 80/443 for :0.
    if (u.port === '0') return resolve(`bad URL ${url} (port 0)`);
    const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(u, { method: 'POST', headers, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve(err.message));
    req.end(body);
  });
}

/** The next visit status along the progress order (the spec lists no transitions). */
export function nextVisitStatus(current: string): string {
  const i = PROGRESS.indexOf(current);
  if (i < 0) return 'booked';
  return PROGRESS[Math.min(i + 1, PROGRESS.length - 1)]!;
}
