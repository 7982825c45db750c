import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockServer } from '../../src/emulator/server.js';
import { InterruptedError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import { expectUsageError, PIPED, piped, plain, TERMINAL } from '../fake-io.js';
import { BIN, fakeIO, run, testServer, until } from '../helpers.js';
import { secretFileFixture } from '../webhook-fixture.js';

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

  it('refuse /api/v2 addressed to another name too: sandbox tools and auto_book cannot be driven', async () => {
    const bearer = { authorization: 'Bearer mock-token', 'content-type': 'application/json' };
    const r = mock.referrals.at(2);
    for (const host of ['api.example', `rebound.example:${mock.port}`]) {
      expect((await send('GET', '/api/v2/modalities', { ...bearer, host })).status).toBe(421);
      const fixture = await send('POST', '/api/v2/sandbox/fixtures', { ...bearer, host }, '{"name":"x"}');
      expect(fixture.status).toBe(421);
      expect(fixture.body).toContain('the emulator answers only requests addressed to');
      const book = { strategy: 'closest', radius: 5, webhook_url: `${receiver.url}/x` };
      const booked = await send(
        'POST',
        `/api/v2/referrals/${r.id}/auto_book`,
        { ...bearer, host },
        JSON.stringify(book),
      );
      expect(booked.status).toBe(421);
    }
    expect(mock.referrals.get(r.id)!.auto_book_request ?? null).toBeNull();
    const own = await send('GET', '/api/v2/modalities', { ...bearer, host: `localhost:${mock.port}` });
    expect(own.status).toBe(200);
  });

  it("auto_book's webhook_url: only the --webhook-url's port or one allowed with --allow-webhook-port", async () => {
    const other = await testServer((_req, res) => res.writeHead(204).end());
    const allowed = await testServer((_req, res) => res.writeHead(204).end());
    const m = await startMockServer({
      port: 0,
      referrals: 3,
      autoBookDelayMs: 1,
      webhookPorts: [allowed.port],
    });
    try {
      const headers = {
        host: `127.0.0.1:${m.port}`,
        authorization: 'Bearer mock-token',
        'content-type': 'application/json',
      };
      const post = (url: string) =>
        new Promise<number>((resolve, reject) => {
          const req = request(
            {
              host: '127.0.0.1',
              port: m.port,
              method: 'POST',
              path: `/api/v2/referrals/${m.referrals.at(0).id}/auto_book`,
              headers,
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', reject);
          req.end(JSON.stringify({ strategy: 'closest', radius: 5, webhook_url: url }));
        });
      // Any other loopback port (a local service) is refused: the emulator posts nowhere it was not told of.
      expect(await post(`${other.url}/internal`)).toBe(422);
      expect(await post(`${allowed.url}/hooks`)).toBe(202);
      await until(() => allowed.seen[0], 'the delivery');
      await m.webhooks.idle();
      expect(other.seen).toEqual([]);
    } finally {
      await m.close();
      await other.close();
      await allowed.close();
    }
  });
});

describe('imaging mock', () => {
  /** Runs `imaging mock` in-process until it prints its URL, asks it for modalities, then stops it as Ctrl-C would. */
  async function emulator(form: typeof TERMINAL | typeof PIPED, extra: string[] = [], query = '') {
    const ac = new AbortController();
    const fake = fakeIO(form);
    const done = main(['mock', '--port', '0', '--referrals', '30', ...extra], {
      io: fake.io,
      env: {},
      signal: ac.signal,
    });
    let url = '';
    for (let i = 0; i < 400 && !url; i++) {
      url = fake.stdout().trim();
      if (!url) await new Promise((r) => setTimeout(r, 5));
    }
    const res = await fetch(`${url}/api/v2/referrals${query}`, {
      headers: { authorization: 'Bearer mock-token' },
    });
    const body = (await res.json()) as { referrals: unknown[] };
    ac.abort(new InterruptedError('SIGINT'));
    return {
      code: await done,
      url,
      status: res.status,
      referrals: body.referrals.length,
      stdout: fake.stdout(),
      stderr: fake.stderr(),
    };
  }

  it('prints its URL alone on stdout, serves the API, and stops on Ctrl-C with 130, in both forms', async () => {
    for (const form of [TERMINAL, PIPED]) {
      const r = await emulator(form);
      expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(r.stdout).toBe(`${r.url}\n`);
      expect(r.status).toBe(200);
      expect(r.referrals).toBe(25);
      expect(plain(r.stderr)).toContain('emulator listening on');
      expect(r.code).toBe(130);
    }
  });

  it('the start-up line says when visits advance by themselves (--advance-every), and only then', async () => {
    const moving = await emulator(PIPED, ['--advance-every', '5s']);
    expect(plain(moving.stderr)).toContain(
      `emulator listening on ${moving.url} (synthetic data; visits advance one step every 5s; Ctrl-C stops it)\n`,
    );
    const still = await emulator(PIPED);
    expect(plain(still.stderr)).toContain(
      `emulator listening on ${still.url} (synthetic data; Ctrl-C stops it)\n`,
    );
  });

  it('searches the referral list with q, and answers as if q were not there with --ignore-search', async () => {
    expect((await emulator(PIPED, [], '?q=r-240001')).referrals).toBe(1);
    expect((await emulator(PIPED, ['--ignore-search'], '?q=r-240001')).referrals).toBe(25);
  });

  it('refuses bad options and secrets in argv before listening', async () => {
    expectUsageError(await piped(['mock', '--port', 'x']), /--port/, 0);
    expectUsageError(await piped(['mock', '--webhook-secret', 'abc']), /--webhook-secret-file FILE/, 0);
    const shape = await piped(['mock', '--list-shape', 'tree']);
    expectUsageError(shape, /--list-shape[\s\S]*object, bare/, 0);
    expect(shape.stderr).not.toContain('tree');
  });
});

describe('end to end: imaging mock sends, imaging webhook listen receives', () => {
  const JSON_TYPE = { 'content-type': 'application/json' };

  const SECRET = 'whsec_test_SECRET_value_9f8e7d';

  const files = secretFileFixture(SECRET);

  const write = (name: string, data: Buffer | string) => {
    const p = join(files.dir.path, name);
    writeFileSync(p, data);
    return p;
  };

  it('delivers signed visit, notification and auto-book events that verify', async () => {
    const listener = spawn(process.execPath, [BIN, 'webhook', 'listen', '--port', '0', '--json'], {
      env: { PATH: process.env.PATH, IMAGING_WEBHOOK_SECRET: SECRET },
    });
    let err = '';
    listener.stderr.on('data', (d) => (err += d));
    const lines: string[] = [];
    let buf = '';
    listener.stdout.on('data', (d) => {
      buf += d;
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      lines.push(...parts);
    });
    for (let i = 0; i < 200 && !/Listening for webhooks on/.test(err); i++)
      await new Promise((r) => setTimeout(r, 25));
    const url = /on (http:\/\/\S+)/.exec(err)![1]!;

    const mock = spawn(
      process.execPath,
      [BIN, 'mock', '--port', '0', '--webhook-url', `${url}hooks`, '--webhook-retry-ms', '50'],
      {
        env: { PATH: process.env.PATH, IMAGING_WEBHOOK_SECRET: SECRET },
      },
    );
    const mockUrl = await new Promise<string>((resolve) =>
      mock.stdout.once('data', (d) => resolve(String(d).trim())),
    );
    try {
      type Listed = { referrals: Array<{ id: string; visits: Array<{ id: string; status: string }> }> };
      const auth = { headers: { authorization: 'Bearer mock-token' } };
      const list = (await (await fetch(`${mockUrl}/api/v2/referrals?per_page=10`, auth)).json()) as Listed;
      const referral = list.referrals.find((r) => r.visits.length > 0)!;
      const visit = referral.visits[0]!;
      const adv = await fetch(`${mockUrl}/__mock/referrals/${referral.id}/visits/${visit.id}/advance`, {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ status: 'report_uploaded' }),
      });
      expect(adv.status).toBe(202);
      await fetch(`${mockUrl}/__mock/referrals/${referral.id}/notifications`, {
        method: 'POST',
        headers: JSON_TYPE,
      });
      await fetch(`${mockUrl}/__mock/referrals/${referral.id}/auto_book`, {
        method: 'POST',
        headers: JSON_TYPE,
      });
      for (let i = 0; i < 200 && lines.length < 3; i++) await new Promise((r) => setTimeout(r, 25));
      const events = lines.map((l) => JSON.parse(l));
      // The emulator sends each delivery on its own connection as the event happens: they may
      // arrive in any order.
      expect(events.map((e) => e.event).sort()).toEqual([
        'notification.status_changed',
        'referral.auto_book_completed',
        'visit.status_changed',
      ]);
      expect(events.every((e) => e.valid && e.encoding === 'hex')).toBe(true);
      const got = (await (
        await fetch(`${mockUrl}/api/v2/referrals/${referral.id}`, auth)
      ).json()) as Listed['referrals'][0];
      expect(got.visits[0]!.status).toBe('report_uploaded');
    } finally {
      mock.kill('SIGTERM');
      listener.kill('SIGINT');
    }
  });

  it('retries a failed delivery with the same event_id', async () => {
    let calls = 0;
    const receiver = await testServer((_req, res) => {
      calls++;
      res.writeHead(calls < 3 ? 503 : 200).end();
    });
    const mock = await startMockServer({
      port: 0,
      webhookUrl: `${receiver.url}/hook`,
      webhookKey: Buffer.from(SECRET),
      webhookRetryDelayMs: 10,
    });
    try {
      const r = mock.referrals.at(1);
      const res = await fetch(`${mock.url}/__mock/referrals/${r.id}/visits/${r.visits[0]!.id}/advance`, {
        method: 'POST',
        headers: JSON_TYPE,
      });
      const { event_id } = (await res.json()) as { event_id: string };
      await mock.webhooks.idle();
      expect(receiver.seen).toHaveLength(3);
      expect(receiver.seen.map((s) => JSON.parse(s.body).event_id)).toEqual([event_id, event_id, event_id]);
      expect(mock.webhooks.log.map((d) => d.status)).toEqual([503, 503, 200]);
    } finally {
      await mock.close();
      await receiver.close();
    }
  });

  it('a delivery captured raw (as by nc -l) verifies, and one changed byte does not', async () => {
    const captured = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      const raw = createNetServer((sock) => {
        sock.on('data', (d) => {
          chunks.push(d);
          const all = Buffer.concat(chunks);
          const head = all.indexOf('\r\n\r\n');
          const len = Number(/content-length: (\d+)/i.exec(all.toString('latin1'))?.[1] ?? -1);
          if (head >= 0 && all.length >= head + 4 + len) {
            sock.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
            raw.close();
            resolve(all);
          }
        });
      }).listen(0, '127.0.0.1', async () => {
        const port = (raw.address() as { port: number }).port;
        const mock = await startMockServer({
          port: 0,
          webhookUrl: `http://127.0.0.1:${port}/capture`,
          webhookKey: Buffer.from(SECRET),
        });
        const r = mock.referrals.at(2);
        await fetch(`${mock.url}/__mock/referrals/${r.id}/visits/${r.visits[0]!.id}/advance`, {
          method: 'POST',
          headers: JSON_TYPE,
        });
        await mock.webhooks.idle();
        await mock.close();
      });
    });
    const file = write('nc.http', captured);
    const ok = await run([
      'webhook',
      'verify',
      '--request',
      file,
      '--secret-file',
      files.secretFile,
      '--tolerance',
      '60',
    ]);
    expect(ok.code).toBe(0);
    const tampered = Buffer.from(captured);
    tampered[tampered.length - 5] = tampered[tampered.length - 5]! ^ 1;
    const bad = await run([
      'webhook',
      'verify',
      '--request',
      write('nc-bad.http', tampered),
      '--secret-file',
      files.secretFile,
    ]);
    expect(bad.code).toBe(8);
  });
});
