import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, mockFixture, run, testServer } from '../helpers.js';

const fx = mockFixture({ allowance: 3 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('sso', () => {
  it('prints the one-time URL and nothing else on stdout', async () => {
    const r = await run(['sso'], { env: fx.env({ IMAGING_TOKEN: 'mock-sso-1' }) });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/portal\/sso\/[A-Za-z0-9_-]+\n$/);
    expect(r.stderr).toBe('');
    expect(fx.apiRequests()).toEqual([expect.objectContaining({ method: 'POST', path: '/api/v2/auth/sso' })]);
  });

  it('--open launches the browser and keeps the URL off stdout', async () => {
    const opened: string[] = [];
    const r = await run(['sso', '--open'], {
      env: fx.env({ IMAGING_TOKEN: 'mock-sso-2' }),
      deps: {
        openUrl: async (u) => {
          opened.push(u);
          return true;
        },
      },
    });
    expect(r.code).toBe(0);
    expect(opened).toHaveLength(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Opened the partner portal');
  });

  it('--open on a machine without a browser prints the URL with a note', async () => {
    const r = await run(['sso', '--open'], {
      env: fx.env({ IMAGING_TOKEN: 'mock-sso-3' }),
      deps: { openUrl: async () => false },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\/portal\/sso\//);
    expect(r.stderr).toContain('The browser did not confirm it opened the page');
  });

  it('keeps the URL out of the --verbose trace', async () => {
    const r = await run(['sso', '--verbose'], { env: fx.env({ IMAGING_TOKEN: 'mock-sso-4' }) });
    const url = r.stdout.trim();
    expect(r.stderr).toContain('> POST ');
    expect(r.stderr).toMatch(/< 200 OK \d+ ms request-id=req_/);
    expect(r.stderr).not.toContain(url.split('/').pop());
  });
});

describe('API errors through the CLI', () => {
  it('expired token: exit 3 with the code and what to do', async () => {
    const r = await run(['modalities'], { env: fx.env({ IMAGING_TOKEN: 'mock-expired' }) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('code:       api_token_expired (authentication_error)');
    expect(r.stderr).toContain('hint: The sandbox token has expired');
    expect(r.stderr).not.toContain('    at ');
  });

  it('invalid token: exit 3', async () => {
    // The local environment sends emulator tokens only: a sandbox pointed at the emulator sends this one.
    const r = await run(['modalities'], { env: fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'nope' }) });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('unauthorized');
  });

  it('sandbox allowance: exit 6 after N successful requests; errors do not count', async () => {
    const env = fx.env({ IMAGING_TOKEN: 'mock-allowance-test' });
    expect((await run(['cpt', '73721'], { env })).code).toBe(0);
    expect((await run(['modalities'], { env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }) })).code).toBe(0);
    expect((await run(['law-firms', 'search', ' x'], { env })).code).toBe(0);
    // A 4xx (here a 422) does not use the allowance.
    const dup = ['law-firms', 'create', '--name', "D'Angelo & D'Amato", '--city', 'Newark', '--state', 'NJ'];
    expect((await run(dup, { env })).code).toBe(7);
    expect((await run(['modalities'], { env })).code).toBe(0);
    const r = await run(['modalities'], { env });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('sandbox_request_limit_reached');
    expect(r.stderr).toContain('waiting will not help');
    // It is never retried.
    expect(fx.apiRequests().filter((q) => q.status === 429)).toHaveLength(1);
  });

  it('exhausted token straight away: exit 6', async () => {
    const r = await run(['modalities'], { env: fx.env({ IMAGING_TOKEN: 'mock-exhausted' }) });
    expect(r.code).toBe(6);
  });
});

describe('server and network failures through the CLI', () => {
  const servers: Array<Awaited<ReturnType<typeof testServer>>> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  const server = async (h: Parameters<typeof testServer>[0]) => {
    const s = await testServer(h);
    servers.push(s);
    return { s, env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: s.url, IMAGING_CONFIG_DIR: '/nonexistent' } };
  };

  it('404: exit 4 with the request id', async () => {
    const { env } = await server((_q, res) =>
      json(res, 404, {
        error: 'Not found',
        message: 'Not found',
        type: 'not_found_error',
        code: 'not_found',
        request_id: 'req_404',
      }),
    );
    const r = await run(['modalities'], { env });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('request id: req_404');
  });

  it('500: exit 1, retried, request id shown', async () => {
    const { s, env } = await server((_q, res) =>
      json(
        res,
        500,
        { error: 'x', message: 'Internal server error', code: 'internal_error' },
        { 'x-request-id': 'req_500x' },
      ),
    );
    const r = await run(['modalities'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: Internal server error');
    expect(r.stderr).toContain('request id: req_500x');
    expect(r.stderr).toContain('hint: The server failed');
    expect(s.seen).toHaveLength(3);
  });

  it('403 with only { error }: exit 5 with the message', async () => {
    const { env } = await server((_q, res) => json(res, 403, { error: 'Forbidden for this account' }));
    const r = await run(['modalities'], { env });
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('error: Forbidden for this account');
  });

  it('HTML error page from a proxy: one clear message', async () => {
    const { env } = await server((_q, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>');
    });
    const r = await run(['modalities'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('HTML page ("502 Bad Gateway"), probably from a proxy or gateway');
    expect(r.stderr).not.toContain('<center>');
  });

  it('malformed JSON in a 200: exit 1, says so', async () => {
    const { env } = await server((_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[{"id": "x", "name": "MR');
    });
    const r = await run(['modalities'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not valid JSON \(truncated or malformed JSON, \d+ bytes\)/);
  });

  it('timeout: exit 1 and how to raise it', async () => {
    const { env } = await server((_q, res) => setTimeout(() => json(res, 200, []), 1500));
    const r = await run(['modalities', '--timeout', '100'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('timed out after 100 ms');
    expect(r.stderr).toContain('--timeout');
  });

  it('connection refused: exit 1, names the URL', async () => {
    const { s, env } = await server((_q, res) => json(res, 200, []));
    await s.close();
    servers.length = 0;
    const r = await run(['modalities'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: connection refused by ${s.url}`);
  });

  it('the token is never sent over plain http to another host', async () => {
    const r = await run(['modalities'], {
      env: {
        IMAGING_BASE_URL: 'http://imaging.example.com',
        IMAGING_TOKEN: 'x',
        IMAGING_CONFIG_DIR: '/nonexistent',
      },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('refusing to send the API token over plain http to imaging.example.com');
  });
});

describe('usage errors', () => {
  it('suggests the command meant', async () => {
    const r = await run(['cpd', '73721']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'cpd'");
    expect(r.stderr).toContain('Did you mean cpt?');
  });
  it('rejects unknown options and environments', async () => {
    expect((await run(['cpt', '73721', '--frmat', 'json'])).code).toBe(2);
    const e = await run(['--env', 'staging', 'modalities']);
    expect(e.code).toBe(2);
    expect(e.stderr).toContain('unknown environment "staging"');
  });
  it('--help exits 0 and lists commands', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('cpt <code>');
  });
});
