import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cli, json, mockFixture, run, spawnCli, tempDir, testServer } from '../helpers.js';
import '../reliability.js';

/**
 * A real token reaches only the server it belongs to: never a loopback port another local user
 * may hold, never a server whose certificate is not checked, never a path outside the base URL's
 * /api/v2 through a redirect, and never the screen when a server echoes it back.
 */

const TOKEN = 'prod-REAL-token-0a1b2c3d4e5f';
const MODALITIES = [{ id: '0b9f3c1e-8a51-4c35-9d0e-2b7a4c6e1f00', name: 'MRI', slug: 'mri' }];

let cfg: ReturnType<typeof tempDir>;
beforeEach(() => {
  cfg = tempDir();
});
afterEach(() => cfg.cleanup());
const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: cfg.path, ...extra });
const writeConfig = (config: unknown) =>
  writeFileSync(join(cfg.path, 'config.json'), JSON.stringify(config), { mode: 0o600 });

function missing(tool: string, ...args: string[]): boolean {
  try {
    execFileSync(tool, args, { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const asNobody =
  process.geteuid?.() !== 0
    ? 'not root'
    : missing('setpriv', '--version')
      ? 'no setpriv on this machine'
      : undefined;
if (asNobody) console.log(`token-trust: the listener run as nobody is skipped (${asNobody})`);

describe.skipIf(asNobody !== undefined)('a listener run as another local user (nobody)', () => {
  let listener: ChildProcess;
  let port = 0;
  let base = '';
  const heard: string[] = [];
  beforeAll(async () => {
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const script = `require('node:http').createServer((q, s) => {
      console.log(JSON.stringify(q.headers.authorization ?? null));
      s.writeHead(200, { 'content-type': 'application/json' });
      s.end(${JSON.stringify(JSON.stringify(MODALITIES))});
    }).listen(${port}, '127.0.0.1', () => console.log('"ready"'));`;
    listener = spawn(
      'setpriv',
      ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', script],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let buffered = '';
    await new Promise<void>((resolve, reject) => {
      listener.on('exit', (code) => reject(new Error(`the listener exited (${code})`)));
      listener.stdout?.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          const value = JSON.parse(line) as string | null;
          if (value === 'ready') resolve();
          else heard.push(String(value));
        }
      });
    });
  });
  afterAll(() => {
    listener.removeAllListeners('exit');
    listener.kill();
  });
  beforeEach(() => {
    heard.length = 0;
  });
  // Every environment's stored base URL is the port nobody holds; only local has a token (its own).
  const everyEnvThere = () =>
    writeConfig({
      environments: {
        sandbox: { base_url: base },
        production: { base_url: base },
        local: { base_url: base },
      },
    });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

  it('auth status --check with IMAGING_TOKEN set: nobody hears the token, each environment only its own', async () => {
    everyEnvThere();
    for (const active of ['sandbox', 'production', 'local']) {
      const r = await run(['auth', 'status', '--check'], {
        env: env({ IMAGING_TOKEN: TOKEN, IMAGING_ENV: active }),
      });
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
      if (active !== 'local') expect(r.code).toBe(3);
    }
    await settle();
    expect(heard.length).toBeGreaterThan(0); // local's check reached the listener, with the emulator token
    expect(new Set(heard)).toEqual(new Set(['Bearer mock-token']));
  });

  it('IMAGING_TOKEN with --env local (the real binary): the emulator token goes, said once on stderr', async () => {
    everyEnvThere();
    const r = await spawnCli(['--env', 'local', 'modalities', '--json'], {
      env: env({ IMAGING_TOKEN: TOKEN }),
    });
    expect(r.exitCode).toBe(0);
    const said = String(r.stderr).match(/IMAGING_TOKEN is set but not used/g) ?? [];
    expect(said).toHaveLength(1);
    await settle();
    expect(heard).toEqual(['Bearer mock-token']);
  });

  it('a stored loopback base URL with IMAGING_TOKEN: exit 3 before any request, saying how to name it', async () => {
    everyEnvThere();
    const r = await run(['--env', 'production', 'modalities'], { env: env({ IMAGING_TOKEN: TOKEN }) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`error: IMAGING_TOKEN is not sent to ${base}, a port on this machine`);
    expect(r.stderr).toContain('(the base URL comes from config)');
    expect(r.stderr).toContain(`hint: If the token belongs there, name it: --base-url ${base}`);
    await settle();
    expect(heard).toEqual([]);
  });

  it('named by the same invocation, it is sent (the listener does hear a token it is given)', async () => {
    const r = await run(['--env', 'production', '--base-url', base, 'modalities', '--json'], {
      env: env({ IMAGING_TOKEN: TOKEN }),
    });
    expect(r.code).toBe(0);
    const viaEnv = await run(['--env', 'production', 'modalities', '--json'], {
      env: env({ IMAGING_TOKEN: TOKEN, IMAGING_BASE_URL: base }),
    });
    expect(viaEnv.code).toBe(0);
    await settle();
    expect(heard).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
  });
});

describe('IMAGING_TOKEN and a loopback base URL from the config', () => {
  it('auth status marks it not sent, and --check says why without a request', async () => {
    const quiet = await testServer((_req, res) => json(res, 200, MODALITIES));
    try {
      writeConfig({ environments: { production: { base_url: quiet.url } } });
      const e = env({ IMAGING_TOKEN: TOKEN, IMAGING_ENV: 'production' });
      const [row] = JSON.parse(
        (await run(['auth', 'status', '--json', '--env', 'production'], { env: e })).stdout,
      );
      expect(row).toMatchObject({ token_source: 'IMAGING_TOKEN', token_usable: false });
      const check = await run(['auth', 'status', '--check', '--env', 'production'], { env: e });
      expect(check.code).toBe(3);
      expect(check.stdout).toContain('not sent to this base URL');
      expect(check.stdout).toContain('not sent: IMAGING_TOKEN is not sent to');
      expect(quiet.seen).toEqual([]);
    } finally {
      await quiet.close();
    }
  });
});

describe('IMAGING_TOKEN and a stored base URL that is this machine however it is written', () => {
  it.for(['0.0.0.0', '[::ffff:127.0.0.1]', 'localhost.', '127.1'])(
    '%s: exit 3, nothing sent',
    async (host) => {
      const quiet = await testServer((_req, res) => json(res, 200, MODALITIES));
      try {
        writeConfig({ environments: { production: { base_url: `http://${host}:${quiet.port}` } } });
        const r = await run(['--env', 'production', 'modalities'], { env: env({ IMAGING_TOKEN: TOKEN }) });
        expect(r.code).toBe(3);
        expect(r.stderr).toContain('a port on this machine that any local user may listen on');
        expect(quiet.seen).toEqual([]);
      } finally {
        await quiet.close();
      }
    },
  );
});

describe('IMAGING_TOKEN belongs to the active environment only', () => {
  let sandbox: Awaited<ReturnType<typeof testServer>>;
  beforeAll(async () => {
    sandbox = await testServer((_req, res) => json(res, 200, MODALITIES));
  });
  afterAll(() => sandbox.close());

  it('auth status --check for production sends nothing to the sandbox, which has no token of its own', async () => {
    writeConfig({ environments: { sandbox: { base_url: sandbox.url } } });
    const r = await run(['auth', 'status', '--check', '--json'], {
      env: env({ IMAGING_TOKEN: TOKEN, IMAGING_ENV: 'production', IMAGING_BASE_URL: 'https://api.invalid' }),
    });
    const rows = JSON.parse(r.stdout) as Array<{ environment: string; token_source: string; check: string }>;
    expect(rows.find((x) => x.environment === 'sandbox')).toMatchObject({
      token_source: 'none',
      check: 'no token',
    });
    expect(rows.find((x) => x.environment === 'production')).toMatchObject({ token_source: 'IMAGING_TOKEN' });
    expect(sandbox.seen).toEqual([]);
  });
});

describe('redirects stay below the base URL and a token echoed back is never shown', () => {
  let server: Awaited<ReturnType<typeof testServer>>;
  beforeAll(async () => {
    server = await testServer((req, res) => {
      const url = req.url ?? '';
      if (url === '/gw/api/v2/modalities') {
        res.writeHead(302, { location: '/admin/steal' });
        res.end();
      } else if (url === '/dots/api/v2/modalities') {
        res.writeHead(302, { location: '/dots/api/v2/..;/..;/steal' });
        res.end();
      } else if (url === '/inside/api/v2/modalities') {
        res.writeHead(301, { location: '/inside/api/v2/modalities/' });
        res.end();
      } else if (url === '/inside/api/v2/modalities/') {
        json(res, 200, MODALITIES);
      } else if (url.startsWith('/echo/')) {
        const auth = req.headers.authorization ?? '';
        res.writeHead(401, `Bad ${auth}`, {
          'content-type': 'application/json',
          'x-request-id': `req ${auth}`,
        });
        res.end(
          JSON.stringify({
            type: 'authentication_error',
            code: 'unauthorized',
            message: `token ${auth.slice(7)} is not valid`,
            errors: [`header was "${auth}"`, encodeURIComponent(auth.slice(7))],
          }),
        );
      } else json(res, 404, { message: 'no such path' });
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.seen.length = 0;
  });
  const get = (prefix: string, extra: string[] = []) =>
    run(['--env', 'production', '--base-url', `${server.url}${prefix}`, 'modalities', ...extra], {
      env: env({ IMAGING_TOKEN: TOKEN }),
    });

  it('a same-origin redirect out of the path prefix is not followed: the token stays below /gw/api/v2', async () => {
    const r = await get('/gw');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `error: the server redirected to ${server.url}/admin/steal, outside ${server.url}/gw/api/v2; imaging sends your token only below the base URL and stopped`,
    );
    expect(server.seen.map((s) => s.url)).toEqual(['/gw/api/v2/modalities']);
  });

  it('a redirect whose ..; segments a Java server resolves out of the prefix is not followed', async () => {
    const r = await get('/dots');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('imaging sends your token only below the base URL');
    expect(server.seen).toHaveLength(1);
  });

  it('a redirect below the prefix is followed', async () => {
    const r = await get('/inside', ['--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(MODALITIES);
    expect(server.seen.map((s) => s.url)).toEqual([
      '/inside/api/v2/modalities',
      '/inside/api/v2/modalities/',
    ]);
  });

  it('an error that echoes the token (body, reason phrase, request id) shows it redacted, trace included', async () => {
    const r = await get('/echo', ['--verbose']);
    expect(r.code).toBe(3);
    expect(server.seen[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    expect(r.stdout + r.stderr).not.toContain(TOKEN.slice(5));
    expect(r.stderr).toContain('error: token [redacted token] is not valid');
    expect(r.stderr).toContain('header was "Bearer [redacted token]"');
    // A request id that carries more than an id's characters is not shown at all.
    expect(r.stderr).toContain('request id: [redacted]');
    expect(r.stderr).toContain('< 401 Bad Bearer [redacted token]');
  });
});

const noOpenssl = missing('openssl', 'version') ? 'no openssl on this machine' : undefined;
if (noOpenssl) console.log(`token-trust: the self-signed HTTPS server is skipped (${noOpenssl})`);

describe.skipIf(noOpenssl !== undefined)('a server with a self-signed certificate', () => {
  const dir = tempDir();
  let server: ReturnType<typeof createHttpsServer>;
  let url = '';
  const seen: string[] = [];
  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        // An EC key: made at once, where an RSA key's primes take a tenth of a second or more.
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'],
        ...['-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'],
        ...['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir.path, 'key.pem')],
        ...['-out', join(dir.path, 'cert.pem')],
      ],
      { stdio: 'ignore' },
    );
    server = createHttpsServer(
      { key: readFileSync(join(dir.path, 'key.pem')), cert: readFileSync(join(dir.path, 'cert.pem')) },
      (req, res) => {
        seen.push(req.headers.authorization ?? '');
        json(res, 200, MODALITIES);
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    dir.cleanup();
  });
  beforeEach(() => {
    seen.length = 0;
  });
  // The real binary where Node itself reads the variable as the process starts; the refusal of an
  // untrusted certificate is the same in-process (this process trusts no local certificate either).
  const lookup = (extra: NodeJS.ProcessEnv, real = true) =>
    cli(real, ['--env', 'production', '--base-url', url, 'modalities', '--json'], {
      env: env({ IMAGING_TOKEN: TOKEN, ...extra }),
    });

  it('is refused with a hint that names NODE_EXTRA_CA_CERTS; nothing reaches it', async () => {
    const r = await lookup({}, false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`error: TLS certificate problem with ${url}: self-signed certificate`);
    expect(r.stderr).toContain('NODE_EXTRA_CA_CERTS=/path/to/ca.pem');
    expect(seen).toEqual([]);
  });

  it('NODE_TLS_REJECT_UNAUTHORIZED=0: exit 3, saying why, and no token is sent (nor anything else)', async () => {
    const r = await lookup({ NODE_TLS_REJECT_UNAUTHORIZED: '0', NODE_NO_WARNINGS: '1' });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain(
      'error: NODE_TLS_REJECT_UNAUTHORIZED=0 turns off certificate checks, so imaging sends no token',
    );
    expect(r.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(seen).toEqual([]);
    const status = await run(['--env', 'production', '--base-url', url, 'auth', 'status', '--check'], {
      env: env({ IMAGING_TOKEN: TOKEN, NODE_TLS_REJECT_UNAUTHORIZED: '0' }),
    });
    expect(status.code).toBe(3);
    expect(seen).toEqual([]);
  });

  it('trusted through NODE_EXTRA_CA_CERTS, it answers', async () => {
    const r = await lookup({ NODE_EXTRA_CA_CERTS: join(dir.path, 'cert.pem') });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(seen).toEqual([`Bearer ${TOKEN}`]);
  });
});

describe('path parameters never lead the token out of the base URL', () => {
  /**
   * URL parsers leave `..;` alone, but servers that read `;` path parameters (Tomcat, Jetty) drop
   * the parameter and then take the segment as `..`: `/prefix/api/v2/x/..;/..;/outside` reaches
   * `/prefix/outside` there, with the bearer token. path.* (set, and read from a hand-edited file)
   * and every request path (`imaging api` included) refuse such segments; `imaging api` also refuses
   * encoded slashes and backslashes. A real server on 127.0.0.1, behind the base URL
   * http://127.0.0.1:PORT/prefix, records every request that reaches it; the real binary for the
   * first of each kind, the others in-process.
   */
  const ID = '3212c76a-c27e-4ca2-9e90-bb9c865c1630';

  let server: Awaited<ReturnType<typeof testServer>>;

  let dir: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    server = await testServer((_req, res) => json(res, 200, { payments: [] }));
    dir = tempDir();
  });

  afterAll(async () => {
    await server.close();
    dir.cleanup();
  });

  beforeEach(() => {
    server.seen.length = 0;
    writeFileSync(join(dir.path, 'config.json'), '{}');
  });

  const env = () => ({
    IMAGING_ENV: 'local',
    IMAGING_BASE_URL: `${server.url}/prefix`,
    IMAGING_CONFIG_DIR: dir.path,
    IMAGING_TOKEN: 'tok-secret-params',
  });

  describe('path.* refuses dot segments with a ;parameter', () => {
    it.for([
      '/api/v2/x/..;/..;/..;/outside/{id}',
      '/api/v2/x/..;x/{id}',
      '/api/v2/referrals/{id}/.;/payments',
      '/api/v2/..;jsessionid=1/{id}',
    ])('config set path.payments %s is exit 2', async (value) => {
      // The real binary for the first value, in-process for the others.
      const real = value === '/api/v2/x/..;/..;/..;/outside/{id}';
      const r = await cli(real, ['config', 'set', 'path.payments', value], { env: env() });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/must not hold \. or \.\. segments \(nor \.\.; or \.;x/);
    });

    it('a hand-edited path.payments with ..; is refused on read; nothing is sent (exit 1)', async () => {
      writeFileSync(
        join(dir.path, 'config.json'),
        JSON.stringify({
          environments: { local: { paths: { payments: '/api/v2/x/..;/..;/..;/outside/{id}' } } },
        }),
      );
      // In-process: the file is refused as it is read, before any request.
      const r = await cli(false, ['referrals', 'payments', ID], { env: env() });
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('"environments.local.paths.payments" must not hold . or .. segments');
      expect(server.seen).toEqual([]);
    });

    it('a ; parameter on an ordinary segment is still allowed, and sent as written', async () => {
      const s = await cli(false, ['config', 'set', 'path.payments', '/api/v2/referrals;v=2/{id}/payments'], {
        env: env(),
      });
      expect(s.exitCode, s.stderr).toBe(0);
      const r = await spawnCli(['referrals', 'payments', ID], { env: env() });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(server.seen.map((q) => q.url)).toEqual([`/prefix/api/v2/referrals;v=2/${ID}/payments`]);
    });
  });

  describe('imaging api: the per-request check', () => {
    it.for([
      ['/api/v2/x/..;/..;/outside', /holds a dot segment \(\.\.;\)/],
      ['/referrals/..;x/..;/..;/outside', /holds a dot segment \(\.\.;x\)/],
      ['/api/v2/%2e%2e;/outside', /holds a dot segment \(%2e%2e;\)/],
      ['/api/v2/.;/modalities', /holds a dot segment \(\.;\)/],
      ['/api/v2/a%2F..%2F..%2F..%2Foutside', /holds an encoded slash \(%2f\)/],
      ['/api/v2/a%5c..%5c..%5coutside', /holds a backslash \(\\ or %5c\)/],
    ] as const)('%s is exit 2; nothing is sent', async ([path, message]) => {
      // The real binary for the first path, in-process for the others.
      const r = await cli(path === '/api/v2/x/..;/..;/outside', ['api', path], { env: env() });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(server.seen).toEqual([]);
    });

    it('an encoded slash in the query is not a path segment: sent', async () => {
      // In-process: the check of the path is the same code; the real binary sends a request above.
      const r = await cli(false, ['api', '/api/v2/modalities?next=a%2Fb'], { env: env() });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(server.seen.map((q) => q.url)).toEqual(['/prefix/api/v2/modalities?next=a%2Fb']);
    });
  });
});

describe('a stored token goes only to its origin', () => {
  /**
   * A stored token is bound to the origin (scheme, host, port) it was stored for. Two servers on
   * 127.0.0.1 are two origins (different ports): a token stored for the first must never reach the
   * second, however the base URL is pointed there (IMAGING_BASE_URL, --base-url, config set).
   */

  const TOKEN = 'prod-secret-TOKEN-5d81e0aa';

  const MODALITIES = [{ id: '0b9f3c1e-8a51-4c35-9d0e-2b7a4c6e1f00', name: 'MRI', slug: 'mri' }];

  type Server = Awaited<ReturnType<typeof testServer>>;

  let legit: Server;

  let other: Server;

  beforeAll(async () => {
    legit = await testServer((_req, res) => json(res, 200, MODALITIES, { 'x-request-id': 'req-legit' }));
    other = await testServer((_req, res) => json(res, 200, MODALITIES, { 'x-request-id': 'req-other' }));
  });

  afterAll(async () => {
    await legit.close();
    await other.close();
  });

  let cfg: ReturnType<typeof tempDir>;

  beforeEach(() => {
    cfg = tempDir();
    legit.seen.length = 0;
    other.seen.length = 0;
  });

  afterEach(() => cfg.cleanup());

  const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: cfg.path, ...extra });

  const prod = ['--env', 'production'];

  const configFile = () => join(cfg.path, 'config.json');

  const stored = () => JSON.parse(readFileSync(configFile(), 'utf8'));

  async function loginToLegit() {
    const r = await run([...prod, 'auth', 'login', '--with-token', '--base-url', legit.url], {
      env: env(),
      stdin: `${TOKEN}\n`,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`it is sent only to ${legit.url}`);
    legit.seen.length = 0;
  }

  describe('a stored token goes only to the origin it was stored for', () => {
    it('auth login --base-url binds the token to that origin', async () => {
      await loginToLegit();
      expect(stored().environments.production).toEqual({
        token: TOKEN,
        base_url: legit.url,
        token_origin: legit.url,
      });
      const r = await run([...prod, 'modalities', '--json'], { env: env() });
      expect(r.code).toBe(0);
      expect(legit.seen).toHaveLength(1);
      expect(legit.seen[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    });

    it('IMAGING_BASE_URL pointing at another server: exit 3, that server sees no request (real binary)', async () => {
      await loginToLegit();
      const r = await spawnCli([...prod, 'modalities'], {
        env: env({ IMAGING_BASE_URL: other.url }),
      });
      expect(r.exitCode).toBe(3);
      expect(r.stderr).toContain(
        `error: the stored production token belongs to ${legit.url}, not to ${other.url} (the base URL from IMAGING_BASE_URL): it is never sent to another server`,
      );
      expect(r.stderr).toContain('set IMAGING_TOKEN for a one-off');
      expect(r.stderr).toContain(`imaging auth login --env production --base-url ${other.url}`);
      expect(r.stderr + r.stdout).not.toContain(TOKEN);
      expect(other.seen).toHaveLength(0);
      expect(legit.seen).toHaveLength(0);
    });

    it('--base-url pointing at another server: exit 3, nothing sent', async () => {
      await loginToLegit();
      const r = await run([...prod, '--base-url', other.url, 'modalities'], { env: env() });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('(the base URL from --base-url)');
      expect(other.seen).toHaveLength(0);
    });

    it('a different scheme or port of the same host is another origin; a path prefix is not', async () => {
      await loginToLegit();
      const otherPort = await run([...prod, '--base-url', `http://127.0.0.1:${other.port}/`, 'modalities'], {
        env: env(),
      });
      expect(otherPort.code).toBe(3);
      const https = await run([...prod, '--base-url', `https://127.0.0.1:${legit.port}`, 'modalities'], {
        env: env(),
      });
      expect(https.code).toBe(3);
      expect(https.stderr).toContain(`not to https://127.0.0.1:${legit.port}`);
      expect(other.seen).toHaveLength(0);
      // Same origin with a path prefix: allowed, the prefix is kept.
      const prefixed = await run([...prod, '--base-url', `${legit.url}/gateway/api/v2`, 'modalities'], {
        env: env(),
      });
      expect(prefixed.code).toBe(0);
      expect(legit.seen.map((s) => s.url)).toEqual(['/gateway/api/v2/modalities']);
    });

    it('config set base-url to another origin is allowed, says the token stays behind, and then refuses', async () => {
      await loginToLegit();
      const set = await run([...prod, 'config', 'set', 'base-url', other.url], { env: env() });
      expect(set.code).toBe(0);
      expect(set.stderr).toContain(
        `Note: the stored production token belongs to ${legit.url} and will not be sent to ${other.url}. Log in for the new base URL: imaging auth login --env production`,
      );
      const r = await run([...prod, 'modalities'], { env: env() });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('(the base URL from config)');
      expect(r.stderr).toContain('hint: Log in for the new base URL: imaging auth login --env production;');
      expect(other.seen).toHaveLength(0);
      // A path change on the same origin says nothing and keeps working.
      await run([...prod, 'config', 'set', 'base-url', legit.url], { env: env() });
      const same = await run([...prod, 'config', 'set', 'base-url', `${legit.url}/v`], { env: env() });
      expect(same.stderr).not.toContain('Note:');
    });

    it('auth login does not send a new token to another origin that came only from IMAGING_BASE_URL', async () => {
      await loginToLegit();
      const r = await run([...prod, 'auth', 'login', '--with-token'], {
        env: env({ IMAGING_BASE_URL: other.url }),
        stdin: 'new-secret-token-9999\n',
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `error: IMAGING_BASE_URL (${other.url}) is another origin than the stored base-url of production (${legit.url})`,
      );
      expect(other.seen).toHaveLength(0);
      expect(stored().environments.production.token).toBe(TOKEN);
      // Named with --base-url, it is the user's choice: verified there and bound there.
      const named = await run([...prod, 'auth', 'login', '--with-token', '--base-url', other.url], {
        env: env({ IMAGING_BASE_URL: other.url }),
        stdin: 'new-secret-token-9999\n',
      });
      expect(named.code).toBe(0);
      expect(stored().environments.production.token_origin).toBe(other.url);
    });

    it('IMAGING_TOKEN still goes wherever the user points it', async () => {
      await loginToLegit();
      const r = await run([...prod, 'modalities', '--json'], {
        env: env({ IMAGING_BASE_URL: other.url, IMAGING_TOKEN: 'one-off-token-1234' }),
      });
      expect(r.code).toBe(0);
      expect(other.seen).toHaveLength(1);
      expect(other.seen[0]?.headers.authorization).toBe('Bearer one-off-token-1234');
    });

    it('--env local keeps working with no login (the emulator token is not a secret)', async () => {
      const r = await run(['--env', 'local', '--base-url', other.url, 'modalities', '--json'], {
        env: env(),
      });
      expect(r.code).toBe(0);
      expect(other.seen[0]?.headers.authorization).toBe('Bearer mock-token');
    });
  });

  describe('a config written before tokens were bound', () => {
    it('binds the token on first use to the stored base URL, says so once, and then refuses other origins', async () => {
      writeFileSync(
        configFile(),
        JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
        { mode: 0o600 },
      );
      const first = await run([...prod, 'modalities', '--json'], { env: env() });
      expect(first.code).toBe(0);
      expect(first.stderr).toContain(
        `Note: the stored production token had no origin recorded (a config from an older version); it is now bound to ${legit.url} (the stored base-url of production) and will be sent only there.`,
      );
      expect(stored().environments.production.token_origin).toBe(legit.url);
      const second = await run([...prod, 'modalities', '--json'], { env: env() });
      expect(second.code).toBe(0);
      expect(second.stderr).not.toContain('Note:');
      const attack = await run([...prod, 'modalities'], { env: env({ IMAGING_BASE_URL: other.url }) });
      expect(attack.code).toBe(3);
      expect(other.seen).toHaveLength(0);
    });

    it('a hostile IMAGING_BASE_URL on first use does not capture the binding when a base URL is stored', async () => {
      writeFileSync(
        configFile(),
        JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
      );
      const r = await run([...prod, 'modalities'], { env: env({ IMAGING_BASE_URL: other.url }) });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`it is now bound to ${legit.url}`);
      expect(other.seen).toHaveLength(0);
    });

    it('without a stored base URL, IMAGING_BASE_URL or --base-url never binds it: exit 3, nothing sent', async () => {
      const old = JSON.stringify({ environments: { production: { token: TOKEN } } });
      writeFileSync(configFile(), old);
      for (const how of [
        { env: env({ IMAGING_BASE_URL: other.url }), args: [] },
        { env: env(), args: ['--base-url', other.url] },
      ]) {
        const r = await run([...prod, ...how.args, 'modalities'], { env: how.env });
        expect(r.code).toBe(3);
        expect(r.stderr).toContain('error: the stored production token has no origin recorded yet');
        expect(r.stderr).toContain(`imaging config set base-url ${other.url} --env production`);
        expect(r.stderr).toContain('set IMAGING_TOKEN');
        expect(r.stderr + r.stdout).not.toContain(TOKEN);
      }
      expect(other.seen).toHaveLength(0);
      expect(readFileSync(configFile(), 'utf8')).toBe(old);
    });

    it('config set base-url binds an unbound token with no stored base URL to the URL typed, and says so', async () => {
      writeFileSync(configFile(), JSON.stringify({ environments: { production: { token: TOKEN } } }));
      const set = await run([...prod, 'config', 'set', 'base-url', legit.url], { env: env() });
      expect(set.code).toBe(0);
      expect(set.stderr).toContain(`it is now bound to ${legit.url} and will be sent only there`);
      expect(stored().environments.production).toEqual({
        token: TOKEN,
        base_url: legit.url,
        token_origin: legit.url,
      });
      const r = await run([...prod, 'modalities', '--json'], { env: env() });
      expect(r.code).toBe(0);
      expect(legit.seen).toHaveLength(1);
    });

    it('local never sends a stored real token: the emulator token goes, the config is left alone', async () => {
      const old = JSON.stringify({ environments: { local: { token: TOKEN } } });
      writeFileSync(configFile(), old);
      const r = await run(['--env', 'local', 'modalities', '--json'], {
        env: env({ IMAGING_BASE_URL: other.url }),
      });
      expect(r.code).toBe(0);
      expect(other.seen.map((s) => s.headers.authorization)).toEqual(['Bearer mock-token']);
      expect(readFileSync(configFile(), 'utf8')).toBe(old);
    });

    it('config unset base-url keeps the old token bound to the base URL it had', async () => {
      writeFileSync(
        configFile(),
        JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
      );
      const unset = await run([...prod, 'config', 'unset', 'base-url'], { env: env() });
      expect(unset.code).toBe(0);
      expect(unset.stderr).toContain(`it stays bound to ${legit.url}`);
      expect(stored().environments.production).toEqual({ token: TOKEN, token_origin: legit.url });
      const r = await run([...prod, 'modalities'], { env: env({ IMAGING_BASE_URL: other.url }) });
      expect(r.code).toBe(3);
      expect(other.seen).toHaveLength(0);
    });

    it('auth status --check binds an unbound token before sending it, so another origin gets nothing', async () => {
      writeFileSync(
        configFile(),
        JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
      );
      const r = await run([...prod, 'auth', 'status', '--check'], {
        env: env({ IMAGING_BASE_URL: other.url }),
      });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(`it is now bound to ${legit.url}`);
      expect(r.stdout).toContain('not sent: the token belongs to another origin');
      expect(other.seen).toHaveLength(0);
      expect(stored().environments.production.token_origin).toBe(legit.url);
    });

    it('config set base-url binds an unbound token to the old base URL before changing it', async () => {
      writeFileSync(
        configFile(),
        JSON.stringify({ environments: { production: { token: TOKEN, base_url: legit.url } } }),
      );
      const set = await run([...prod, 'config', 'set', 'base-url', other.url], { env: env() });
      expect(set.stderr).toContain(`belongs to ${legit.url} and will not be sent to ${other.url}`);
      const r = await run([...prod, 'modalities'], { env: env() });
      expect(r.code).toBe(3);
      expect(other.seen).toHaveLength(0);
    });
  });

  describe('a config edited by hand', () => {
    it('an origin written differently (case, trailing slash) is compared as an origin', async () => {
      writeFileSync(
        configFile(),
        JSON.stringify({
          environments: {
            production: { token: TOKEN, base_url: legit.url, token_origin: `${legit.url.toUpperCase()}/` },
          },
        }),
      );
      const r = await run([...prod, 'modalities', '--json'], { env: env() });
      expect(r.code).toBe(0);
      expect(legit.seen).toHaveLength(1);
    });

    it.for<[string, (u: string) => string]>([
      ['a trailing slash', (u) => `${u}/`],
      ['an upper-case scheme', (u) => u.replace('http:', 'HTTP:')],
      ['127.1 for 127.0.0.1', (u) => u.replace('127.0.0.1', '127.1')],
      ['a path', (u) => `${u}/api/v2`],
    ])('auth status compares %s as requests do', async ([, edit]) => {
      writeFileSync(
        configFile(),
        JSON.stringify({
          environments: { production: { token: TOKEN, base_url: legit.url, token_origin: edit(legit.url) } },
        }),
      );
      const status = await run([...prod, 'auth', 'status', '--check'], { env: env() });
      expect(status.stdout).not.toContain('not sent');
      expect(status.stdout).toContain(legit.url);
      expect(status.code).toBe(0);
      const r = await run([...prod, 'modalities', '--json'], { env: env() });
      expect(r.code).toBe(0);
      expect(legit.seen).toHaveLength(2);
    });

    it('a token that is not text is no token: exit 3 naming the key and the fix, nothing sent', async () => {
      writeFileSync(
        configFile(),
        JSON.stringify({ environments: { production: { token: { a: 1 }, base_url: legit.url } } }),
      );
      const r = await run([...prod, 'modalities'], { env: env() });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('"environments.production.token" is an object, not text');
      expect(r.stderr).toContain('hint: Run: imaging auth login --env production');
      expect(legit.seen).toHaveLength(0);
    });
  });

  describe('auth status shows the origin each token belongs to', () => {
    it('table and --json; a token bound elsewhere is marked and --check sends nothing (exit 3)', async () => {
      await loginToLegit();
      const table = await run(['auth', 'status'], { env: env() });
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/TOKEN ORIGIN/);
      expect(table.stdout).toMatch(new RegExp(`production .*\\*\\*\\*\\*e0aa \\(config\\)\\s+${legit.url}`));
      expect(table.stdout).toMatch(/local .*emulator default\)\s+any \(not stored\)/);
      const js = JSON.parse((await run(['auth', 'status', '--json'], { env: env() })).stdout);
      expect(js.find((x: { environment: string }) => x.environment === 'production')).toMatchObject({
        token_origin: legit.url,
        token_usable: true,
      });
      const elsewhere = await run([...prod, 'auth', 'status', '--check'], {
        env: env({ IMAGING_BASE_URL: other.url }),
      });
      expect(elsewhere.code).toBe(3);
      expect(elsewhere.stdout).toContain(`${legit.url} (not this base URL: not sent)`);
      expect(elsewhere.stdout).toContain('not sent: the token belongs to another origin');
      expect(other.seen).toHaveLength(0);
    });

    it('config list shows the origin next to the masked token', async () => {
      await loginToLegit();
      const r = await run(['config', 'list'], { env: env() });
      expect(r.stdout).toMatch(new RegExp(`token-origin\\s+production\\s+${legit.url}`));
      expect(r.stdout).not.toContain(TOKEN);
    });

    it('logout forgets the origin with the token', async () => {
      await loginToLegit();
      await run([...prod, 'auth', 'logout'], { env: env() });
      expect(stored().environments.production).toEqual({ base_url: legit.url });
    });
  });

  describe('a token that cannot be an HTTP header value: exit 3 before any request, never echoed', () => {
    const bad: Array<[string, string, RegExp]> = [
      ['CR', 'SECRETpartA\rSECRETpartB', /carriage return \(CR\) at character 12/],
      ['LF', 'SECRETpartA\nSECRETpartB', /line feed \(LF\) at character 12/],
      ['NUL', 'SECRETpartA\u0000SECRETpartB', /NUL character at character 12/],
      [
        'non-Latin-1',
        'SECRETpartA\u2019SECRETpartB',
        /character outside Latin-1 \(U\+2019\) at character 12/,
      ],
      ['emoji', 'SECRETpartA\u{1F511}SECRETpartB', /character outside Latin-1 \(U\+1F511\) at character 12/],
    ];

    it.for(bad)('%s in IMAGING_TOKEN', async ([, token, why]) => {
      const r = await run([...prod, '--base-url', other.url, 'modalities'], {
        env: env({ IMAGING_TOKEN: token }),
      });
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/^error: the token in IMAGING_TOKEN cannot be sent: it contains /);
      expect(r.stderr).toMatch(why);
      expect(r.stderr + r.stdout).not.toMatch(/SECRETpart/);
      expect(r.stderr).not.toMatch(/unexpected failure|Invalid character/);
      expect(other.seen).toHaveLength(0);
    });

    it.for(bad)('%s in the stored config', async ([, token, why]) => {
      writeFileSync(
        configFile(),
        JSON.stringify({
          environments: { production: { token, base_url: other.url, token_origin: other.url } },
        }),
        { mode: 0o600 },
      );
      const r = await run([...prod, 'modalities'], { env: env() });
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/^error: the stored production token cannot be sent: it contains /);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toContain('imaging auth login --env production --with-token');
      expect(r.stderr + r.stdout).not.toMatch(/SECRETpart/);
      expect(other.seen).toHaveLength(0);
    });

    it('the real binary, a stored token with CR LF: one message, exit 3, no request', async () => {
      writeFileSync(
        configFile(),
        JSON.stringify({
          environments: {
            production: { token: 'SECRETpartA\r\nX', base_url: other.url, token_origin: other.url },
          },
        }),
      );
      const r = await spawnCli([...prod, 'modalities'], { env: env() });
      expect(r.exitCode).toBe(3);
      expect(r.stderr).toMatch(/carriage return \(CR\) at character 12/);
      expect(r.stderr).not.toMatch(/SECRETpart|\n\s+at /);
      expect(other.seen).toHaveLength(0);
    });

    it('auth login refuses such a token without a request and stores nothing', async () => {
      const r = await run([...prod, 'auth', 'login', '--with-token', '--base-url', other.url], {
        env: env(),
        stdin: 'SECRETpartA\u2019SECRETpartB\n',
      });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(
        'this token cannot be sent: it contains a character outside Latin-1 (U+2019)',
      );
      expect(r.stderr).not.toMatch(/SECRETpart/);
      expect(other.seen).toHaveLength(0);
      expect(() => readFileSync(configFile())).toThrow();
    });
  });
});

/**
 * An attacker's path: `%2e%2e` is a `..` to every URL parser (Node's included), so a path that
 * passed a plain-`..` check sent the bearer token below the base URL's prefix. A real server on
 * 127.0.0.1 with the base URL http://127.0.0.1:PORT/prefix records where the requests land.
 */
describe('percent-encoded dots never lead the token out of the base URL', () => {
  /**
   * `referrals payments ID` and `referrals notifications ID` against the emulator: a table with the
   * columns people read, every field in JSON/NDJSON/CSV, the per-environment path, and the 403 a
   * partner meets until the read is enabled for the account.
   */
  const fx = mockFixture({ referrals: 12 });

  let id = '';

  beforeAll(async () => {
    await fx.start();
    const r = await run(['referrals', 'list', '--json'], { env: fx.env() });
    id = JSON.parse(r.stdout)[1].id;
  });

  afterAll(() => fx.stop());

  beforeEach(() => fx.reset());

  const climbing = '/api/v2/%2e%2e/%2e%2e/%2e%2e/outside/{id}';
  it.for(['payments', 'notifications'] as const)(
    'a hand-edited path.%s with percent-encoded dots is refused on read; nothing is sent (exit 1)',
    async (kind) => {
      const server = await testServer((_req, res) => json(res, 200, []));
      try {
        const env = { ...fx.env(), IMAGING_BASE_URL: `${server.url}/prefix`, IMAGING_TOKEN: 'tok-secret' };
        const { writeFileSync } = await import('node:fs');
        writeFileSync(
          join(fx.configDir, 'config.json'),
          JSON.stringify({ environments: { local: { paths: { [kind]: climbing } } } }),
        );
        const r = await run(['referrals', kind, id, '--verbose'], { env });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`"environments.local.paths.${kind}" must not hold a percent-encoded dot`);
        expect(r.stderr).toContain(`imaging config set path.${kind}`);
        expect(server.seen).toEqual([]);
      } finally {
        await server.close();
        const { rmSync } = await import('node:fs');
        rmSync(join(fx.configDir, 'config.json'), { force: true });
      }
    },
  );

  it.for([
    [123, /"environments\.local\.paths\.payments" is a number, not text/],
    [{ x: 1 }, /"environments\.local\.paths\.payments" is an object, not text/],
  ] as const)(
    'a non-text path.payments (%j) is named, not "e.trim is not a function"',
    async ([value, msg]) => {
      const { writeFileSync, rmSync } = await import('node:fs');
      const file = join(fx.configDir, 'config.json');
      writeFileSync(file, JSON.stringify({ environments: { local: { paths: { payments: value } } } }));
      try {
        const r = await run(['referrals', 'payments', id], { env: fx.env() });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(msg);
        expect(r.stderr).not.toMatch(/is not a function/);
        // config set repairs it.
        const s = await run(['config', 'set', 'path.payments', '/api/v2/referrals/{id}/payments'], {
          env: fx.env(),
        });
        expect(s.code, s.stderr).toBe(0);
        expect((await run(['referrals', 'payments', id], { env: fx.env() })).code).toBe(0);
      } finally {
        rmSync(file, { force: true });
      }
    },
  );

  it('a raw API path with %2e%2e is refused before any request, out of the prefix or within it', async () => {
    const server = await testServer((_req, res) => json(res, 200, { ok: true }));
    try {
      const env = { ...fx.env(), IMAGING_BASE_URL: `${server.url}/prefix`, IMAGING_TOKEN: 'tok-secret' };
      const bad = await run(['api', '/api/v2/%2e%2e/%2e%2e/%2e%2e/outside'], { env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('holds a dot segment (%2e%2e)');
      expect(server.seen).toEqual([]);
      // Within the prefix too: a server may resolve a dot segment differently from the URL parser.
      const within = await run(['api', '/api/v2/a/%2e%2e/modalities', '--verbose'], { env });
      expect(within.code).toBe(2);
      expect(within.stderr).toContain('holds a dot segment (%2e%2e)');
      expect(server.seen).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

/**
 * Paths that a URL parser leaves below the base URL but some server resolves elsewhere: it decodes
 * twice, drops `;…` (also when encoded), trims trailing dots, folds fullwidth characters or reads a
 * backslash as a slash. A real server on 127.0.0.1 behind http://127.0.0.1:PORT/t records each
 * request and whether it carried Authorization: none of these paths is sent, typed or redirected to.
 */
describe('server-specific path tricks never carry the token', () => {
  const TRICKS = [
    ['/referrals/%252e%252e/%252e%252e/%252e%252e/outside', 'a twice-encoded dot (%252e)'],
    ['/referrals/..%252F..%252F..%252Foutside', 'a twice-encoded slash (%252F)'],
    ['/referrals/%25252e%25252e/outside', 'a twice-encoded percent sign (%2525)'],
    ['/referrals/..%3B/..%3B/..%3B/outside', 'a dot segment (..%3B)'],
    ['/referrals/x/.../outside', 'a dot segment (...)'],
    ['/referrals/x/.. /outside', 'a dot segment (.. )'],
    ['/referrals/\uff0e\uff0e/\uff0e\uff0e/outside', 'a character that is not printable ASCII'],
    ['/referrals/%EF%BC%8E%EF%BC%8E/%EF%BC%8E%EF%BC%8E/outside', 'a character that is not printable ASCII'],
    ['/referrals/x\\y', 'a backslash'],
    ['/referrals/..%5c..%5coutside', 'a backslash'],
  ] as const;
  let server: Awaited<ReturnType<typeof testServer>>;
  beforeAll(async () => {
    server = await testServer((req, res) => {
      const hop = /^\/t\/api\/v2\/hop\/(\d+)$/.exec(req.url ?? '');
      const trick = hop && TRICKS[Number(hop[1])]?.[0];
      if (!trick) return json(res, 200, { ok: true });
      // A Location header holds bytes: the fullwidth dots go percent-encoded, as a server sends them.
      res.writeHead(302, { location: `/t/api/v2${encodeURI(trick).replace(/%25/g, '%')}` });
      res.end();
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.seen.length = 0;
  });
  const args = (...rest: string[]) => ['--env', 'production', '--base-url', `${server.url}/t`, ...rest];
  const withToken = () => env({ IMAGING_TOKEN: TOKEN });

  it.for(TRICKS)('imaging api %s: exit 2 before any request', async ([path, why]) => {
    const r = await cli(path === TRICKS[0][0], args('api', path), { env: withToken() });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`holds ${why}`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(server.seen).toEqual([]);
  });

  it.for(TRICKS.map(([path], i) => ({ i, path })))(
    'a redirect to $path is not followed: one request, the token never goes there',
    async ({ i }) => {
      const r = await run(args('api', `/hop/${i}`), { env: withToken() });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain('imaging sends your token only below the base URL and stopped');
      expect(server.seen.map((s) => s.url)).toEqual([`/t/api/v2/hop/${i}`]);
    },
  );

  it.for(['/api/v2/referrals/..%3B/..%3B/{id}', '/api/v2/referrals/.../{id}'])(
    'config set path.payments %s is exit 2',
    async (value) => {
      const r = await run(['config', 'set', 'path.payments', value], { env: env() });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/must not hold \. or \.\. segments/);
    },
  );
});
