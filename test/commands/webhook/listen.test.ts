import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { InterruptedError } from '../../../src/errors.js';
import { main } from '../../../src/main.js';
import { signatureHeaderValue } from '../../../src/webhook/sign.js';
import { fakeIO, run } from '../../helpers.js';
import { secretFileFixture, VISIT_EVENT } from '../../webhook-fixture.js';

const SECRET = 'whsec_listen_host';
const files = secretFileFixture(SECRET);
const BODY = Buffer.from(JSON.stringify(VISIT_EVENT));

/** POSTs a signed delivery to 127.0.0.1:port with the given Host header (as a rebound page or a tunnel sends it). */
function deliver(port: number, host: string): Promise<{ status: number; body: string }> {
  const ts = String(Math.floor(Date.now() / 1000));
  const headers = {
    host,
    'content-type': 'application/json',
    'X-Service-Event': 'visit.status_changed',
    'X-Service-Timestamp': ts,
    'X-Service-Signature': signatureHeaderValue(Buffer.from(SECRET), ts, BODY, 'hex'),
  };
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/hooks', headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

const stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

async function listen(args: string[]) {
  const ac = new AbortController();
  const fake = fakeIO();
  const done = main(
    ['webhook', 'listen', '--port', '0', '--json', '--secret-file', files.secretFile, ...args],
    {
      io: fake.io,
      env: {},
      signal: ac.signal,
    },
  );
  let port = 0;
  for (let i = 0; i < 100 && !port; i++) {
    port = Number(/Listening for webhooks on http:\/\/127\.0\.0\.1:(\d+)/.exec(fake.stderr())?.[1] ?? 0);
    if (!port) await new Promise((r) => setTimeout(r, 20));
  }
  stops.push(() => {
    ac.abort(new InterruptedError('SIGINT'));
    return done;
  });
  return { port, out: fake.stdout, err: fake.stderr };
}

describe('webhook listen: the Host a delivery is addressed to', () => {
  it('accepts 127.0.0.1:PORT and localhost:PORT', async () => {
    const l = await listen([]);
    expect((await deliver(l.port, `127.0.0.1:${l.port}`)).status).toBe(200);
    expect((await deliver(l.port, `localhost:${l.port}`)).status).toBe(200);
  });

  it('refuses any other name (a page rebound to 127.0.0.1), naming --allow-host, and says so once on stderr', async () => {
    const l = await listen([]);
    const r = await deliver(l.port, `attacker.example:${l.port}`);
    expect(r.status).toBe(421);
    expect(r.body).toContain('--allow-host attacker.example');
    await deliver(l.port, `attacker.example:${l.port}`);
    expect((await deliver(l.port, `localhost:${l.port + 1}`)).status).toBe(421);
    // Nothing was taken as a delivery.
    expect(l.out()).toBe('');
    const notes = l.err().match(/refused a request addressed to "attacker\.example:\d+"/g) ?? [];
    expect(notes).toHaveLength(1);
    expect(l.err()).toContain('add --allow-host attacker.example');
  });

  it('--allow-host NAME (repeatable) accepts a tunnel host at any port; NAME:PORT only at that port', async () => {
    const l = await listen(['--allow-host', 'Hooks.Tunnel.example', '--allow-host', 'other.example:8443']);
    expect((await deliver(l.port, 'hooks.tunnel.example')).status).toBe(200);
    expect((await deliver(l.port, 'hooks.tunnel.example:443')).status).toBe(200);
    expect((await deliver(l.port, 'other.example:8443')).status).toBe(200);
    expect((await deliver(l.port, 'other.example')).status).toBe(421);
    expect((await deliver(l.port, 'evil.tunnel.example')).status).toBe(421);
    expect(l.out().trim().split('\n')).toHaveLength(3);
  });

  it('--allow-host refuses something that is not a host name (exit 2)', async () => {
    const r = await run(['webhook', 'listen', '--port', '0', '--allow-host', 'https://x.example/']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--allow-host takes a host name');
  });
});
