import { lookup } from 'node:dns/promises';
import { hostname, networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { RETRY_POLICY } from '../../src/api/retry.js';
import { checkLinkTarget } from '../../src/api/transport.js';
import { ApiError, CliError, NetworkError, TimeoutError, UsageError } from '../../src/errors.js';
import { clean } from '../../src/output/text.js';
import { json, testServer } from '../helpers.js';

type Srv = Awaited<ReturnType<typeof testServer>>;
const servers: Srv[] = [];
const serve = async (...args: Parameters<typeof testServer>) => {
  const s = await testServer(...args);
  servers.push(s);
  return s;
};
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const sleeps: number[] = [];
const client = (baseUrl: string, extra: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}) =>
  new ApiClient({
    baseUrl,
    token: 'tok_SECRET_1234',
    timeoutMs: 2000,
    clean,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...extra,
  });

describe('ApiClient', () => {
  it('sends Bearer, Accept, User-Agent and captures X-Request-Id', async () => {
    const s = await serve((_req, res) => json(res, 200, [{ id: 1 }], { 'x-request-id': 'req_abc' }));
    const res = await client(s.url).request({ path: '/modalities' });
    expect(res.data).toEqual([{ id: 1 }]);
    expect(res.requestId).toBe('req_abc');
    const h = s.seen[0]!.headers;
    expect(h.authorization).toBe('Bearer tok_SECRET_1234');
    expect(h.accept).toBe('application/json');
    expect(h['user-agent']).toMatch(/^imaging\/\S+ \(partner-imaging-cli; node v/);
    expect(s.seen[0]!.url).toBe('/api/v2/modalities');
  });

  it('sends JSON bodies with Content-Type', async () => {
    const s = await serve((_req, res) => json(res, 201, { ok: true }));
    await client(s.url).request({ method: 'POST', path: '/law_firms', json: { law_firm: { name: 'A' } } });
    expect(s.seen[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(s.seen[0]!.body)).toEqual({ law_firm: { name: 'A' } });
  });

  it('retries a GET on 503 and 502, then succeeds (3 tries in all)', async () => {
    let n = 0;
    const s = await serve((_req, res) => {
      n++;
      if (n === 1) return json(res, 503, { error: 'busy' });
      if (n === 2) {
        res.writeHead(502, { 'content-type': 'text/html' });
        return res.end('<html><title>Bad Gateway</title></html>');
      }
      json(res, 200, []);
    });
    sleeps.length = 0;
    const res = await client(s.url).request({ path: '/modalities' });
    expect(res.attempts).toBe(3); // the server answers on its third request
    expect(s.seen).toHaveLength(3);
    expect(sleeps).toEqual([225, 450]); // equal jitter: half fixed + half random(0.5)
  });

  it("gives up after the policy's tries and reports the last error with its request id", async () => {
    const s = await serve((_req, res) =>
      json(
        res,
        500,
        { error: 'x', message: 'Internal error', code: 'internal_error' },
        { 'x-request-id': 'req_500' },
      ),
    );
    const err = await client(s.url)
      .request({ path: '/modalities' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.exitCode).toBe(1);
    expect(err.requestId).toBe('req_500');
    expect(s.seen).toHaveLength(RETRY_POLICY.attempts);
  });

  it('never repeats a POST, even on 500', async () => {
    const s = await serve((_req, res) => json(res, 500, { error: 'x' }));
    await expect(
      client(s.url).request({ method: 'POST', path: '/law_firms', json: {} }),
    ).rejects.toBeInstanceOf(ApiError);
    expect(s.seen).toHaveLength(1);
  });

  it('never retries 429 sandbox_request_limit_reached, even with Retry-After', async () => {
    const s = await serve((_req, res) =>
      json(res, 429, { code: 'sandbox_request_limit_reached', message: 'limit' }, { 'retry-after': '1' }),
    );
    const err = await client(s.url)
      .request({ path: '/modalities' })
      .catch((e) => e);
    expect(err.exitCode).toBe(6);
    expect(s.seen).toHaveLength(1);
  });

  it('honours Retry-After on a rate-limit 429', async () => {
    let n = 0;
    const s = await serve((_req, res) =>
      ++n === 1
        ? json(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': '2' })
        : json(res, 200, []),
    );
    sleeps.length = 0;
    await client(s.url).request({ path: '/modalities' });
    expect(sleeps).toEqual([2000]);
  });

  it('does not wait for a Retry-After longer than the cap', async () => {
    const s = await serve((_req, res) =>
      json(res, 503, { message: 'maintenance' }, { 'retry-after': '3600' }),
    );
    const err = await client(s.url)
      .request({ path: '/modalities' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.details.retryAfterSeconds).toBe(3600);
    expect(s.seen).toHaveLength(1);
  });

  it('retries a GET whose 200 body is truncated JSON, then explains it', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[{"id":');
    });
    const err = await client(s.url)
      .request({ path: '/modalities' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(CliError);
    expect(err.message).toMatch(/not valid JSON \(truncated or malformed JSON/);
    expect(s.seen).toHaveLength(RETRY_POLICY.attempts);
  });

  it('names the URL when the connection is refused, after retrying', async () => {
    const s = await serve((_req, res) => json(res, 200, []));
    const url = s.url;
    await s.close();
    servers.length = 0;
    const err = await client(url)
      .request({ path: '/modalities' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.message).toBe(`connection refused by ${url}`);
    expect(err.exitCode).toBe(1);
  });

  it('times out a slow answer', async () => {
    const s = await serve((_req, res) => setTimeout(() => json(res, 200, []), 1000));
    const err = await client(s.url, { timeoutMs: 100, maxAttempts: 1 })
      .request({ path: '/modalities' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toMatch(/timed out after 100 ms/);
  });

  it('refuses to send the token over plain http to a non-loopback host, sending nothing', async () => {
    const c = client('http://api.example.com');
    await expect(c.request({ path: '/modalities' })).rejects.toThrow(UsageError);
    expect(c.requestCount).toBe(0);
  });

  it('follows a same-host redirect for GET', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/api/v2/old') {
        res.writeHead(301, { location: '/api/v2/new' });
        return res.end();
      }
      json(res, 200, { moved: true });
    });
    const res = await client(s.url).request({ path: '/old' });
    expect(res.data).toEqual({ moved: true });
    expect(s.seen[1]!.headers.authorization).toBe('Bearer tok_SECRET_1234');
  });

  it('does not follow a redirect to another host, so the token is not forwarded', async () => {
    const other = await serve((_req, res) => json(res, 200, { stolen: true }), '127.0.0.2');
    const s = await serve((_req, res) => {
      res.writeHead(302, { location: `${other.url}/api/v2/modalities` });
      res.end();
    });
    const err = await client(s.url)
      .request({ path: '/modalities' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(CliError);
    expect(err.message).toMatch(/redirected to another host \(127\.0\.0\.2:\d+\)/);
    expect(other.seen).toHaveLength(0);
  });

  it.each(['http://[', 'http://evil\u009b.example/x'])(
    'a redirect to an address that is not a URL (%j) is one clear error, nothing followed',
    async (location) => {
      const s = await serve((_req, res) => {
        // Node refuses to write a control character in a header: write the answer raw.
        res.socket?.end(
          Buffer.from(`HTTP/1.1 302 Found\r\nLocation: ${location}\r\nContent-Length: 0\r\n\r\n`, 'latin1'),
        );
      });
      const err = await client(s.url)
        .request({ path: '/modalities' })
        .catch((e) => e);
      expect(err).toBeInstanceOf(CliError);
      expect(err.message).toMatch(/redirected \(HTTP 302\) to an address that is not a valid URL/);
      expect(s.seen).toHaveLength(1);
    },
  );

  it('stops at once when the abort signal fires', async () => {
    const s = await serve((_req, res) => setTimeout(() => json(res, 200, []), 2000));
    const ac = new AbortController();
    const c = client(s.url, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const started = Date.now();
    await expect(c.request({ path: '/modalities' })).rejects.toThrow('interrupted');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('ApiClient.fetchLink: links to this machine', () => {
  it("a remote server's link (or a redirect) to a local service is refused, and the service gets nothing", async () => {
    const local = await serve((_req, res) => json(res, 200, { admin: true }));
    const { port } = new URL(local.url);
    const remote = client('https://api.example.test');
    for (const link of [
      `http://127.0.0.1:${port}/admin.pdf`,
      `https://localhost:${port}/x`,
      `http://[::1]:${port}/y`,
    ])
      await expect(remote.fetchLink(link, { maxBytes: 1024 })).rejects.toThrow(
        /a link to this machine .* from a server elsewhere/,
      );
    expect(() =>
      checkLinkTarget(new URL(`http://127.0.0.1:${port}/`), 'https://api.example.test/api/v2', true),
    ).toThrow(/the link redirected to this machine/);
    // This machine by another name: its own interface address, or a name that resolves to it.
    const own = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && !a.internal && a.family === 'IPv4')?.address;
    if (own)
      await expect(remote.fetchLink(`https://${own}:${port}/d.pdf`, { maxBytes: 1024 })).rejects.toThrow(
        /a link to this machine/,
      );
    const name = hostname();
    const resolved = await lookup(name, { all: true }).catch(() => []);
    if (resolved.some((a) => a.address.startsWith('127.') || a.address === own))
      await expect(remote.fetchLink(`https://${name}:${port}/c.pdf`, { maxBytes: 1024 })).rejects.toThrow(
        new RegExp(`a link to ${name}:${port}, which is this machine`),
      );
    expect(local.seen).toHaveLength(0);
    // The emulator's own links (its base URL on this machine) are fetched.
    const res = await client(local.url).fetchLink(`${local.url}/report.pdf`, { maxBytes: 1024 });
    expect(res.status).toBe(200);
  });

  it("a server on this machine by another name or address: its own links, and this machine's, are fetched", async () => {
    // A base URL on one of this machine's own addresses is on this machine, as a loopback one is.
    const own = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && !a.internal && a.family === 'IPv4')?.address;
    if (own) {
      const base = `https://${own}:8443/api/v2`;
      expect(() => checkLinkTarget(new URL(`https://${own}:8443/files/r.pdf`), base, false)).not.toThrow();
      expect(() => checkLinkTarget(new URL('http://127.0.0.1:9/r.pdf'), base, true)).not.toThrow();
    }
    // A link on the base URL's own origin is the API server itself, whatever its name resolves to.
    const name = hostname();
    const resolved = await lookup(name, { all: true }).catch(() => []);
    if (!resolved.some((a) => a.address === '127.0.0.1')) return;
    const server = await serve((_req, res) => json(res, 200, { report: true }));
    const base = `http://${name}:${new URL(server.url).port}`;
    const res = await client(base).fetchLink(`${base}/api/v2/files/report.pdf`, { maxBytes: 1024 });
    expect(res.status).toBe(200);
    expect(server.seen).toHaveLength(1);
  });
});
