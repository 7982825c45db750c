import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer } from '../../src/emulator/server.js';
import { testServer } from '../helpers.js';

type Mock = Awaited<ReturnType<typeof startMockServer>>;
let mock: Mock;
let receiver: Awaited<ReturnType<typeof testServer>>;
beforeAll(async () => {
  receiver = await testServer((_req, res) => res.writeHead(204).end());
  mock = await startMockServer({ port: 0, referrals: 5, webhookRetryDelayMs: 10, webhookMaxAttempts: 1 });
});
afterAll(async () => {
  await mock.close();
  await receiver.close();
});

/** A request to the emulator with exactly these headers (a browser page's, a rebound name's). */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: mock.port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const FAULT = JSON.stringify({ fault: '500:1@1000' });

describe('imaging mock: the /__mock/ routes answer only this machine', () => {
  it('take a JSON POST addressed to 127.0.0.1:PORT or localhost:PORT', async () => {
    const own = { host: `127.0.0.1:${mock.port}`, 'content-type': 'application/json' };
    expect((await send('POST', '/__mock/faults', own, FAULT)).status).toBe(201);
    const local = { host: `localhost:${mock.port}`, 'content-type': 'application/json; charset=utf-8' };
    expect((await send('POST', '/__mock/faults', local, FAULT)).status).toBe(201);
    expect((await send('DELETE', '/__mock/faults', { host: `localhost:${mock.port}` })).status).toBe(204);
  });

  it('refuse a cross-site simple POST (a form type, text/plain or no type): nothing changes', async () => {
    const host = `127.0.0.1:${mock.port}`;
    for (const type of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
    ]) {
      const r = await send('POST', '/__mock/faults', { host, 'content-type': type }, FAULT);
      expect(r.status).toBe(415);
      expect(r.body).toContain('Content-Type: application/json');
    }
    const r = [0, 1, 2, 3, 4].map((i) => mock.referrals.at(i)).find((x) => x.visits.length > 0)!;
    const advance = `/__mock/referrals/${r.id}/visits/${r.visits[0]!.id}/advance`;
    const before = r.visits[0]!.status;
    expect((await send('POST', advance, { host })).status).toBe(415);
    expect(mock.referrals.get(r.id)!.visits[0]!.status).toBe(before);
    expect(mock.faults.describe()).toEqual(expect.objectContaining({ faults: [] }));
  });

  it('refuse a request addressed to another name (DNS rebinding), even a JSON one', async () => {
    const json = { 'content-type': 'application/json' };
    for (const host of [`rebound.example:${mock.port}`, `127.0.0.1:${mock.port + 1}`, 'localhost']) {
      expect((await send('POST', '/__mock/faults', { ...json, host }, FAULT)).status).toBe(421);
      expect((await send('GET', '/__mock/requests', { host })).status).toBe(421);
    }
    expect(mock.faults.describe()).toEqual(expect.objectContaining({ faults: [] }));
  });

  it('post a per-request webhook_url only to a receiver on this machine', async () => {
    const headers = { host: `127.0.0.1:${mock.port}`, 'content-type': 'application/json' };
    const r = mock.referrals.at(1);
    const far = await send(
      'POST',
      `/__mock/referrals/${r.id}/auto_book`,
      headers,
      JSON.stringify({ webhook_url: 'http://203.0.113.7/collect' }),
    );
    expect(far.status).toBe(422);
    expect(far.body).toContain('a receiver on this machine');
    expect(mock.webhooks.log).toHaveLength(0);
    const near = await send(
      'POST',
      `/__mock/referrals/${r.id}/auto_book`,
      headers,
      JSON.stringify({ webhook_url: `${receiver.url}/per-request` }),
    );
    expect(near.status).toBe(202);
    await mock.webhooks.idle();
    expect(receiver.seen.map((s) => s.url)).toEqual(['/per-request']);
  });

  it('leave the API itself to its Bearer check, whatever the Host', async () => {
    const r = await send('GET', '/api/v2/modalities', {
      host: 'api.example',
      authorization: 'Bearer mock-token',
    });
    expect(r.status).toBe(200);
  });
});
