import { writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { signatureHeaderValue } from '../src/webhook/sign.js';
import { tempDir } from './helpers.js';

/** A visit.status_changed event of the spec's shape, shared by the webhook test files. */
export const VISIT_EVENT = {
  event_id: '9b2d8f3e-4c1a-4f6b-9a7e-2d5c8b1f0e3a',
  event_name: 'visit.status_changed',
  status: 'report_uploaded',
  changes: { status: ['sent_to_rad', 'report_uploaded'] },
  visit_id: '1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10',
  occurred_at: '2026-11-21T19:00:00Z',
  referral: {
    id: '3212c76a-c27e-4ca2-9e90-bb9c865c1630',
    reference: 'R-240001',
    visits: [{ id: '1c0b7a52-3e9d-4f18-8b6a-7d2e9c4f5a10' }],
  },
};

/** A referral.auto_book_completed event: the one the spec sends unsigned (to a per-request webhook_url). */
export const AUTO_BOOK_EVENT = {
  event_name: 'referral.auto_book_completed',
  occurred_at: '2026-11-21T19:00:00Z',
  auto_book_request: { id: '0d9e4c1b-8a7f-4e2d-9c3b-1a2b3c4d5e6f', status: 'completed', outcome: 'booked' },
  referral: { reference: 'R-240001' },
};

/** A temporary folder holding the secret in a file (with the trailing newline editors add). */
export function secretFileFixture(secret: string) {
  const fx = { dir: undefined as unknown as ReturnType<typeof tempDir>, secretFile: '' };
  beforeAll(() => {
    fx.dir = tempDir();
    fx.secretFile = join(fx.dir.path, 'secret.txt');
    writeFileSync(fx.secretFile, `${secret}\n`);
  });
  afterAll(() => fx.dir.cleanup());
  return fx;
}

/** A receiver that reads a request head and then behaves as `onRequest` says (for slow answers). */
export async function rawReceiver(onRequest: (socket: Socket, timers: NodeJS.Timeout[]) => void) {
  const sockets = new Set<Socket>();
  const timers: NodeJS.Timeout[] = [];
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    let seen = '';
    let started = false;
    socket.on('data', (c) => {
      seen += c.toString('latin1');
      if (started || !seen.includes('\r\n\r\n')) return;
      started = true;
      onRequest(socket, timers);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearInterval(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Often, for ever: well inside the idle timer, so only the deadline ends the wait. */
export const DRIPS: Record<string, (socket: Socket, timers: NodeJS.Timeout[]) => void> = {
  'a header one byte at a time': (socket, timers) => {
    socket.write('HTTP/1.1 200 OK\r\nX-A: ');
    timers.push(setInterval(() => socket.destroyed || socket.write('a'), 50));
  },
  '100 Continue for ever': (socket, timers) => {
    timers.push(setInterval(() => socket.destroyed || socket.write('HTTP/1.1 100 Continue\r\n\r\n'), 50));
  },
  '102 Processing for ever': (socket, timers) => {
    timers.push(setInterval(() => socket.destroyed || socket.write('HTTP/1.1 102 Processing\r\n\r\n'), 50));
  },
};

/** A signed capture of VISIT_EVENT as a receiver saves it, and files to keep it in (one per test file). */
export function captureFixture() {
  const SECRET = 'whsec_test_SECRET_value_9f8e7d';

  const NOW = new Date('2026-11-21T19:00:12Z');

  const TS = String(Math.floor(NOW.getTime() / 1000) - 12);

  const files = secretFileFixture(SECRET);

  const event = VISIT_EVENT;

  const BODY = Buffer.from(JSON.stringify(event));

  const sig = (body: Buffer = BODY, ts = TS, secret = SECRET) =>
    signatureHeaderValue(Buffer.from(secret), ts, body, 'hex');

  const capture = (body: Buffer = BODY, ts = TS, signature = sig(body, ts), eol = '\r\n') =>
    Buffer.concat([
      Buffer.from(
        [
          'POST /webhooks/imaging HTTP/1.1',
          'Host: partner.example',
          'Content-Type: application/json',
          'User-Agent: Service-Webhook/1.0',
          'X-Service-Event: visit.status_changed',
          `X-Service-Timestamp: ${ts}`,
          `X-Service-Signature: ${signature}`,
          `Content-Length: ${body.length}`,
          '',
          '',
        ].join(eol),
      ),
      body,
    ]);

  const write = (name: string, data: Buffer | string) => {
    const p = join(files.dir.path, name);
    writeFileSync(p, data);
    return p;
  };

  const now = () => NOW;
  return { SECRET, NOW, TS, files, event, BODY, sig, capture, write, now };
}
