import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signatureHeaderValue } from '../../../src/webhook/sign.js';
import { expectUsageError } from '../../fake-io.js';
import { mockFixture, run, testServer } from '../../helpers.js';

const SECRET = 'whsec_sandbox_test';

describe('imaging sandbox test-webhook', () => {
  let receiver: Awaited<ReturnType<typeof testServer>>;
  let fx: ReturnType<typeof mockFixture>;
  beforeAll(async () => {
    receiver = await testServer((_req, res) => res.writeHead(204).end());
    fx = mockFixture({ webhookUrl: `${receiver.url}/hooks`, webhookKey: Buffer.from(SECRET) });
    await fx.start();
  });
  afterAll(async () => {
    await fx.stop();
    await receiver.close();
  });
  beforeEach(() => {
    fx.reset();
    receiver.seen.length = 0;
  });

  it('the emulator delivers the event asked for to the group webhook, signed', async () => {
    const r = await run(['sandbox', 'test-webhook', '--event', 'Notification.Status_Changed'], {
      env: fx.env(),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ event_name: 'notification.status_changed', signed: true });
    await fx.mock.webhooks.idle();
    expect(receiver.seen).toHaveLength(1);
    const d = receiver.seen[0]!;
    expect(d.url).toBe('/hooks');
    expect(JSON.parse(d.body).event_name).toBe('notification.status_changed');
    const ts = String(d.headers['x-service-timestamp']);
    // Signed over `{timestamp}.{raw_body}` with the group's secret, as the spec says.
    expect(d.headers['x-service-signature']).toBe(
      signatureHeaderValue(Buffer.from(SECRET), ts, Buffer.from(d.body), 'hex'),
    );
  });

  it('an unknown event is refused before any request; production too; --dry-run sends nothing', async () => {
    expectUsageError(
      await run(['sandbox', 'test-webhook', '--event', 'visit.changed'], { env: fx.env() }),
      /unknown event "visit.changed"/,
      0,
    );
    const prod = await run(['sandbox', 'test-webhook'], {
      env: fx.env({ IMAGING_ENV: 'production', IMAGING_TOKEN: 'mock-prod' }),
    });
    expectUsageError(prod, /not production/, 0);
    const dry = await run(['sandbox', 'test-webhook', '--dry-run'], { env: fx.env() });
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({});
    expect(fx.apiRequests()).toEqual([]);
    expect(receiver.seen).toEqual([]);
  });
});
