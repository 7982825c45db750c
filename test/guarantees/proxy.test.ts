import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bypassed, chooseProxy } from '../../src/api/proxy.js';
import { cli, mockFixture, tempDir } from '../helpers.js';

/**
 * A real proxy on 127.0.0.1 between the CLI and an HTTPS API at a host name only the proxy
 * resolves (api.partner.test: the CLI cannot reach it directly), signed by a local CA.
 */

const API_HOST = 'api.partner.test';
const TOKEN = 'prod_tok_5e3d1f0c9b8a7e6d';

function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const openssl = haveOpenssl();
if (!openssl) console.log('skipped: the proxy tests need openssl for their local CA');

interface Forwarded {
  kind: 'CONNECT' | 'forward';
  target: string;
  proxyAuthorization: string | undefined;
  /** Every byte the CLI sent through the tunnel. */
  bytes: Buffer;
}

/** How the proxy answers: let through, refuse (403), or ask for Basic credentials (407) unless given these. */
let mode: { kind: 'open' } | { kind: 'refuse' } | { kind: 'auth'; user: string; password: string } = {
  kind: 'open',
};
const forwarded: Forwarded[] = [];
const apiSeen: Array<{ url: string; authorization: string | undefined }> = [];
let apiPort = 0;
let proxyPort = 0;
let dir: ReturnType<typeof tempDir>;
let api: Server;
let proxy: Server;
const mock = mockFixture();

function allowed(req: IncomingMessage): boolean {
  if (mode.kind !== 'auth') return mode.kind === 'open';
  const want = `Basic ${Buffer.from(`${mode.user}:${mode.password}`).toString('base64')}`;
  return req.headers['proxy-authorization'] === want;
}

/** The proxy's own name resolution: the API's name is this machine, for the proxy alone. */
const resolve = (host: string) => (host === API_HOST ? '127.0.0.1' : host);

beforeAll(async () => {
  await mock.start();
  if (!openssl) return;
  dir = tempDir();
  const f = (n: string) => join(dir.path, n);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=imaging test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  );
  ssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    f('api.key'),
    '-out',
    f('api.csr'),
    '-subj',
    `/CN=${API_HOST}`,
  );
  writeFileSync(f('ext'), `subjectAltName=DNS:${API_HOST}\n`);
  ssl(
    'x509',
    '-req',
    '-in',
    f('api.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('api.pem'),
    '-days',
    '2',
    '-extfile',
    f('ext'),
  );

  api = createHttpsServer(
    { key: readFileSync(f('api.key')), cert: readFileSync(f('api.pem')) },
    (req, res) => {
      apiSeen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_proxy' });
      res.end('{"modalities":[{"id":1,"name":"MRI"}]}');
    },
  );
  proxy = createHttpServer((req, res) => {
    // Plain forwarding (absolute-form request line), as a proxy does for http:// URLs.
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      forwarded.push({
        kind: 'forward',
        target: req.url ?? '',
        proxyAuthorization: req.headers['proxy-authorization'],
        bytes: Buffer.concat([Buffer.from(JSON.stringify(req.headers)), ...chunks]),
      });
      res.writeHead(502).end();
    });
  });
  proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const record: Forwarded = {
      kind: 'CONNECT',
      target: req.url ?? '',
      proxyAuthorization: req.headers['proxy-authorization'],
      bytes: Buffer.from(head),
    };
    forwarded.push(record);
    if (mode.kind === 'refuse') return void client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
    if (!allowed(req))
      return void client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corp"\r\nContent-Length: 0\r\n\r\n',
      );
    const [host = '', port = ''] = (req.url ?? '').split(/:(?=\d+$)/);
    const upstream = connect(Number(port), resolve(host), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      client.on('data', (c: Buffer) => {
        record.bytes = Buffer.concat([record.bytes, c]);
      });
      client.pipe(upstream).pipe(client);
    });
    const drop = () => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', drop);
    client.on('error', drop);
  });
  for (const s of [api, proxy]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  apiPort = (api.address() as AddressInfo).port;
  proxyPort = (proxy.address() as AddressInfo).port;
});

afterAll(async () => {
  await mock.stop();
  if (!openssl) return;
  for (const s of [api, proxy]) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  dir.cleanup();
});

beforeEach(() => {
  mode = { kind: 'open' };
  forwarded.length = 0;
  apiSeen.length = 0;
});

/**
 * The built binary against the API at its name, with a production token and the local CA. Runs that
 * stop before a TLS session with the API (no proxy, a refusal, a bad variable) may run in-process
 * (`real` false): only a new process reads NODE_EXTRA_CA_CERTS, so the API can be reached only there.
 */
function imaging(args: string[], env: NodeJS.ProcessEnv, real = true) {
  return cli(real, args, {
    env: {
      PATH: process.env.PATH,
      IMAGING_CONFIG_DIR: dir.path,
      IMAGING_ENV: 'production',
      IMAGING_BASE_URL: `https://${API_HOST}:${apiPort}`,
      IMAGING_TOKEN: TOKEN,
      NODE_EXTRA_CA_CERTS: join(dir.path, 'ca.pem'),
      ...env,
    },
  });
}
const at = () => `127.0.0.1:${proxyPort}`;

describe.skipIf(!openssl)('HTTPS through a proxy (a real CONNECT proxy, a local CA)', () => {
  it('without a proxy the API cannot be reached at all (only the proxy resolves its name)', async () => {
    const r = await imaging(['api', '/modalities'], {}, false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`cannot resolve host ${API_HOST}`);
    expect(r.stderr).toContain(
      'If this network goes out only through a proxy, set HTTPS_PROXY=http://HOST:PORT.',
    );
  });

  it('HTTPS_PROXY: a CONNECT tunnel, and the token travels only inside TLS to the API', async () => {
    const r = await imaging(['api', '/modalities'], { HTTPS_PROXY: `http://${at()}` });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ modalities: [{ id: 1, name: 'MRI' }] });
    expect(forwarded.map((f) => [f.kind, f.target])).toEqual([['CONNECT', `${API_HOST}:${apiPort}`]]);
    // The proxy relayed a TLS session: the request, the token and the path were not readable there.
    const relayed = forwarded[0]!.bytes;
    expect(relayed.length).toBeGreaterThan(100);
    expect(relayed.includes(TOKEN)).toBe(false);
    expect(relayed.includes('/api/v2/modalities')).toBe(false);
    expect(apiSeen).toEqual([{ url: '/api/v2/modalities', authorization: `Bearer ${TOKEN}` }]);
  });

  it('https_proxy (lowercase), a value without a scheme, and ALL_PROXY when no https one is set', async () => {
    for (const env of [{ https_proxy: at() }, { ALL_PROXY: `http://${at()}` }, { all_proxy: at() }]) {
      forwarded.length = 0;
      // In-process: which variable is read is this code's choice; the tunnel to the API is opened
      // through the proxy (the API's certificate, trusted only by a new process, then stops the
      // request). The answer back through a tunnel: HTTPS_PROXY above and --verbose below, the binary.
      const r = await imaging(['api', '/modalities'], env, false);
      expect(r.stderr, JSON.stringify(env)).toMatch(/certificate/i);
      expect(forwarded.map((f) => [f.kind, f.target])).toEqual([['CONNECT', `${API_HOST}:${apiPort}`]]);
    }
  });

  it('NO_PROXY as curl reads it: a listed domain goes direct (and fails here), another does not', async () => {
    // In-process, as the variables above: a domain listed fails at its name before any TLS; one not
    // listed opens the tunnel, as HTTPS_PROXY's run of the binary does.
    for (const no of [
      'partner.test',
      '.partner.test',
      `*`,
      `api.partner.test:${apiPort}`,
      'x.example, partner.test',
    ]) {
      forwarded.length = 0;
      const r = await imaging(['api', '/modalities'], { HTTPS_PROXY: `http://${at()}`, NO_PROXY: no }, false);
      expect(r.stderr, no).toContain(`cannot resolve host ${API_HOST}`);
      expect(forwarded).toEqual([]);
    }
    for (const no of ['other.test', 'notpartner.test', 'api.partner.test:1', '127.0.0.0/8']) {
      forwarded.length = 0;
      const r = await imaging(['api', '/modalities'], { HTTPS_PROXY: `http://${at()}`, no_proxy: no }, false);
      expect(r.stderr, no).toMatch(/certificate/i);
      expect(
        forwarded.map((f) => [f.kind, f.target]),
        no,
      ).toEqual([['CONNECT', `${API_HOST}:${apiPort}`]]);
    }
  });

  it('--verbose names the proxy as host:port, never its credentials (nor does the library DEBUG log)', async () => {
    mode = { kind: 'auth', user: 'svc-imaging', password: 'Pr0xy p@ss' };
    const r = await imaging(['api', '/modalities', '--verbose'], {
      HTTPS_PROXY: `http://svc-imaging:Pr0xy%20p%40ss@${at()}`,
      DEBUG: '*',
    });
    expect(r.stderr).toContain('https-proxy-agent Creating new HttpsProxyAgent');
    expect(r.stderr).not.toContain(Buffer.from('svc-imaging:Pr0xy p@ss').toString('base64'));
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toContain(`* via proxy ${at()} (HTTPS_PROXY)`);
    expect(r.stderr).not.toMatch(/svc-imaging|Pr0xy|p%40ss|p@ss/);
    expect(forwarded[0]!.proxyAuthorization).toBe(
      `Basic ${Buffer.from('svc-imaging:Pr0xy p@ss').toString('base64')}`,
    );
  });

  it('a proxy that asks for credentials (407): one clear error naming the variable and the fix', async () => {
    mode = { kind: 'auth', user: 'u', password: 'right' };
    // In-process: the proxy answers before any TLS session with the API (the binary's proxied runs
    // are above and below).
    const none = await imaging(['api', '/modalities'], { HTTPS_PROXY: `http://${at()}` }, false);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toBe(
      `error: the proxy ${at()} (from HTTPS_PROXY) asks for credentials (HTTP 407 Proxy Authentication Required)\n` +
        `hint: Put them in the variable: HTTPS_PROXY=http://USER:PASSWORD@${at()} (percent-encode @ : / in them).`,
    );
    const wrong = await imaging(
      ['api', '/modalities'],
      { HTTPS_PROXY: `http://u:wrong-secret@${at()}` },
      false,
    );
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toContain(`the proxy ${at()} (from HTTPS_PROXY) refused its credentials (HTTP 407`);
    expect(wrong.stderr).not.toContain('wrong-secret');
    // The API never heard of it.
    expect(apiSeen).toEqual([]);
  });

  it('a proxy that refuses the tunnel (403), or cannot be reached: one error that names the proxy', async () => {
    mode = { kind: 'refuse' };
    const refused = await imaging(['api', '/modalities'], { HTTPS_PROXY: `http://${at()}` }, false);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      `error: the proxy ${at()} (from HTTPS_PROXY) refused to connect to ${API_HOST}:${apiPort} (HTTP 403 Forbidden)`,
    );
    expect(refused.stderr).not.toContain('    at ');
    const dead = await imaging(
      ['api', '/modalities'],
      { HTTPS_PROXY: 'http://user:hunter2@127.0.0.1:1' },
      false,
    );
    expect(dead.exitCode).toBe(1);
    expect(dead.stderr).toContain(
      `error: cannot reach the proxy 127.0.0.1:1 (from HTTPS_PROXY) to connect to ${API_HOST}:${apiPort}: connection refused`,
    );
    expect(dead.stderr).not.toContain('hunter2');
    expect(apiSeen).toEqual([]);
  });

  it('a proxy variable that cannot be used is refused before any request, without its value (exit 2)', async () => {
    for (const [i, [value, said]] of (
      [
        ['socks5://u:hunter2@127.0.0.1:1080', 'HTTPS_PROXY names a SOCKS proxy'],
        ['ftp://u:hunter2@proxy.corp', 'HTTPS_PROXY is not an http:// or https:// proxy URL'],
        ['http://u:hunter2@[bad', 'HTTPS_PROXY is not a proxy URL'],
        [
          'http://u:hunter2%E0%A4%A@proxy.corp:3128',
          'HTTPS_PROXY has a user or password with a broken %-escape',
        ],
      ] as const
    ).entries()) {
      const r = await imaging(['api', '/modalities'], { HTTPS_PROXY: value }, i === 0);
      expect(r.exitCode, value).toBe(2);
      expect(r.stderr).toContain(said);
      expect(r.stderr).not.toContain('hunter2');
    }
  });

  it('a lookup without a proxy variable loads nothing of the proxy library; with one it does', async () => {
    // Node's own module log (CommonJS and ES module loaders) names every file it loads.
    const plain = await imaging(['modalities', '--json'], { NODE_DEBUG: 'module,esm' });
    expect(plain.stderr).toContain('cannot resolve host');
    expect(plain.stderr).not.toContain('dist/proxy.cjs');
    const proxied = await imaging(['modalities', '--json'], { NODE_DEBUG: 'module,esm', HTTPS_PROXY: at() });
    expect(proxied.exitCode).toBe(0);
    // The library and its dependencies, built into one file of the tool's own.
    expect(proxied.stderr).toContain('dist/proxy.cjs');
    // No file under node_modules (Node 22's loader log also prints the folders it would search).
    expect(proxied.stderr).not.toMatch(/\/node_modules\/[^'"\s]+\.(c?js|mjs|json|node)\b/);
  });

  it('plain http to a name: the token is refused before anything reaches the proxy', async () => {
    const r = await imaging(
      ['api', '/modalities'],
      {
        IMAGING_BASE_URL: `http://${API_HOST}:${apiPort}`,
        HTTP_PROXY: `http://${at()}`,
        http_proxy: `http://${at()}`,
      },
      false,
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('refusing to send the API token over plain http');
    expect(forwarded).toEqual([]);
  });

  it('this machine is never proxied: imaging mock keeps working behind any proxy setting', async () => {
    const r = await cli(false, ['modalities', '--json'], {
      env: {
        PATH: process.env.PATH,
        IMAGING_ENV: 'local',
        IMAGING_BASE_URL: mock.mock.url,
        HTTPS_PROXY: `http://${at()}`,
        HTTP_PROXY: `http://${at()}`,
        ALL_PROXY: `http://${at()}`,
      },
    });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(forwarded).toEqual([]);
  });
});

describe('which proxy a request takes (curl rules, pure)', () => {
  const u = (s: string) => new URL(s);
  it('picks the scheme variable (lowercase first), then ALL_PROXY; an empty value is unset', () => {
    const env = { https_proxy: 'http://a:1', HTTPS_PROXY: 'http://b:1', ALL_PROXY: 'http://c:1' };
    expect(chooseProxy(u('https://x.example'), env)?.shown).toBe('a:1');
    expect(chooseProxy(u('https://x.example'), { ...env, https_proxy: '' })?.shown).toBe('b:1');
    expect(chooseProxy(u('https://x.example'), { ALL_PROXY: 'http://c:1' })?.variable).toBe('ALL_PROXY');
    expect(chooseProxy(u('http://x.example'), { HTTPS_PROXY: 'http://b:1' })).toBeUndefined();
    expect(chooseProxy(u('https://x.example'), {})).toBeUndefined();
  });

  it('a proxy without a scheme is http://, without a port 1080 (443 for https://), as for curl', () => {
    expect(chooseProxy(u('https://x.example'), { HTTPS_PROXY: 'proxy.corp' })?.url.href).toBe(
      'http://proxy.corp:1080/',
    );
    expect(chooseProxy(u('https://x.example'), { HTTPS_PROXY: 'https://proxy.corp' })?.shown).toBe(
      'proxy.corp:443',
    );
  });

  it('never proxies this machine', () => {
    for (const h of [
      'http://127.0.0.1:4010',
      'http://localhost:4010',
      'http://[::1]:4010',
      'https://127.3.2.1',
    ])
      expect(
        chooseProxy(u(h), { ALL_PROXY: 'http://p:1', HTTP_PROXY: 'http://p:1', HTTPS_PROXY: 'http://p:1' }),
      ).toBeUndefined();
  });

  it.each([
    ['example.com', 'example.com', 443, true],
    ['api.example.com', 'example.com', 443, true],
    ['api.example.com', '.example.com', 443, true],
    ['example.com', '.example.com', 443, true],
    ['api.example.com', '*.example.com', 443, true],
    ['notexample.com', 'example.com', 443, false],
    ['API.Example.COM', 'example.com', 443, true],
    ['example.com', 'example.com.', 443, true],
    ['example.com', 'a.test  example.com', 443, true],
    ['example.com', 'example.com:8443', 443, false],
    ['example.com', 'example.com:8443', 8443, true],
    ['example.com', '*', 443, true],
    ['example.com', 'a.test,*', 443, false],
    ['10.1.2.3', '10.0.0.0/8', 443, true],
    ['11.1.2.3', '10.0.0.0/8', 443, false],
    ['10.1.2.3', '10.1.2.3', 443, true],
    ['10.1.2.3', '10.1', 443, false],
    ['fd00::5', 'fd00::/8', 443, true],
    ['fd00::5', '[fd00::5]:443', 443, true],
    ['10.1.2.3', 'example.com', 443, false],
    ['example.com', '', 443, false],
  ])('%s with NO_PROXY=%j (port %i): direct %s', (host, list, port, direct) => {
    expect(bypassed(host, port, list)).toBe(direct);
  });
});
