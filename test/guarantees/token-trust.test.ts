import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, run, spawnCli, tempDir, testServer } from '../helpers.js';

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
    expect(r.stderr).toContain('request id: req Bearer [redacted token]');
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
        ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'],
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
  const lookup = (extra: NodeJS.ProcessEnv) =>
    spawnCli(['--env', 'production', '--base-url', url, 'modalities', '--json'], {
      env: env({ IMAGING_TOKEN: TOKEN, ...extra }),
    });

  it('is refused with a hint that names NODE_EXTRA_CA_CERTS; nothing reaches it', async () => {
    const r = await lookup({});
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
