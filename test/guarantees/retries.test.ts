import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import '../reliability.js';
import { RETRY_POLICY } from '../../src/api/retry.js';
import { type FaultMode, parseFault } from '../../src/emulator/faults.js';
import { json, mockFixture, type RunOptions, run as runCli, tempDir, testServer } from '../helpers.js';

/**
 * The fault suite: each fault the emulator can inject, and what a user sees. GETs are retried and
 * succeed after a transient fault; POSTs are never repeated; exports complete with every record or
 * fail with exit 1/3/6 leaving no file; every message is one clear block with no stack trace.
 */

const fx = mockFixture({ referrals: 120, faultDelayMs: 1500 });

beforeAll(() => fx.start());

afterAll(() => fx.stop());

let dir: ReturnType<typeof tempDir>;

/**
 * The client's clock, injected: every back-off and `Retry-After` wait is recorded here and returns
 * at once, so no test waits out real seconds and each can check how long the client would have
 * waited. The default back-off (doubled each time, half of it random) is checked too.
 */
let waited: number[] = [];

const sleep = async (ms: number) => {
  waited.push(ms);
};

const run = (argv: string[], opts: RunOptions = {}) =>
  runCli(argv, { ...opts, deps: { ...opts.deps, clientOverrides: { baseDelayMs: 300, sleep } } });

beforeEach(() => {
  waited = [];
  fx.reset();
  fx.mock.faults.clear();
  for (const k of Object.keys(fx.mock.faults.injected)) delete fx.mock.faults.injected[k];
  dir = tempDir();
});

afterEach(() => dir.cleanup());

const inject = (spec: string, path?: string) => fx.mock.faults.add(parseFault(spec, path));

const injectedCount = () => Object.values(fx.mock.faults.injected).reduce((a, b) => a + b, 0);

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+/);

// Short client timeout so the `slow` fault (1.5 s) counts as a timeout.
const env = () => fx.env({ IMAGING_TOKEN: 'mock-fault-suite' });

describe('a GET meets a transient fault, is retried, and succeeds', () => {
  it.for<[FaultMode, string[]]>([
    ['500', []],
    ['502', []],
    ['reset', []],
    ['truncated', []],
    ['429', []],
    ['slow', ['--timeout', '300']],
  ])('%s', async ([mode, extra], { task }) => {
    inject(`${mode}:1`);
    const r = await run(['cpt', '73721', '--json', '--verbose', ...extra], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(6);
    expect(fx.mock.faults.injected[mode]).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`retrying in \\d+ ms \\(try 2 of ${RETRY_POLICY.attempts}\\)`));
    expect(waited).toHaveLength(1);
    if (mode === '429') {
      expect(r.stderr).toContain('retrying in 1000 ms'); // Retry-After honoured
      expect(waited).toEqual([1000]);
    } else {
      // First back-off: half the base delay, plus up to as much again at random.
      expect(waited[0]).toBeGreaterThanOrEqual(150);
      expect(waited[0]).toBeLessThanOrEqual(300);
    }
    noStack(r.stderr);
  });
});

describe('a GET meets a persistent fault: one clear error, the right exit code', () => {
  it.for<[FaultMode, number, RegExp]>([
    ['500', 1, /error: Internal server error\n {2}status: {5}500 Internal Server Error/],
    ['502', 1, /HTML page \("502 Bad Gateway"\), probably from a proxy or gateway/],
    ['reset', 1, /connection reset by http:\/\/127\.0\.0\.1:\d+|network error/],
    ['truncated', 1, /not valid JSON \(truncated or malformed JSON/],
    ['401', 3, /code: {7}api_token_expired/],
  ])('%s -> exit %i', async ([mode, code, message], { task }) => {
    inject(`${mode}:*`);
    const r = await run(['cpt', '73721'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')[0]).toMatch(/^error: /);
    noStack(r.stderr);
    expect(fx.apiRequests()).toHaveLength(mode === '401' ? 1 : RETRY_POLICY.attempts);
    if (mode !== '401') {
      expect(waited).toHaveLength(RETRY_POLICY.attempts - 1);
      expect(waited[1]).toBeGreaterThanOrEqual(300); // the second back-off doubles
      expect(waited[1]).toBeLessThanOrEqual(600);
    }
  });

  it("a 429 with a Retry-After is tried the policy's attempts, then exit 6", async ({ task }) => {
    inject('429:*');
    const r = await run(['cpt', '73721'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(6);
    expect(r.stderr).toContain('rate_limited');
    expect(fx.apiRequests()).toHaveLength(RETRY_POLICY.attempts);
    expect(waited).toEqual(Array(RETRY_POLICY.attempts - 1).fill(1000)); // the emulator's Retry-After: 1, before each retry
  });

  it('a 429 whose Retry-After asks for days: one request, exit 6, saying when to try again', async () => {
    const server = await testServer((_req, res) =>
      json(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': '3000000' }),
    );
    try {
      const r = await run(['referrals', 'get', '00000000-0000-4000-8000-0000000000aa'], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: server.url, IMAGING_CONFIG_DIR: dir.path },
      });
      expect(r.code).toBe(6);
      expect(server.seen).toHaveLength(1);
      expect(waited).toEqual([]);
      expect(r.stderr).toMatch(
        /^hint: The server is rate limiting and asks for a pause of 35 days: try again after that \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)\.$/m,
      );
    } finally {
      await server.close();
    }
  });

  it('a slow answer past --timeout, every time: exit 1 naming the timeout', async ({ task }) => {
    inject('slow:*');
    // Every answer is slow (1.5 s), so any timeout shorter than that is met by all three tries.
    const r = await run(['modalities', '--timeout', '50'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(1);
    // The wait was three limits: the message says so.
    expect(r.stderr).toContain('request timed out after 50 ms, each of 3 tries');
    expect(r.stderr).toContain('hint: Raise the limit with --timeout <ms> (or a duration: 60s).');
  });
});

describe('a POST is never repeated', () => {
  it.for<[string, string[], string | undefined]>([
    [
      'law-firms create',
      ['law-firms', 'create', '--name', 'Fault Test LLP', '--city', 'Reno', '--state', 'NV'],
      undefined,
    ],
    [
      'referrals create',
      ['referrals', 'create', '--file', '-'],
      '{"patient":{"first_name":"A","last_name":"B"}}',
    ],
    ['sso', ['sso'], undefined],
    ['api POST', ['api', 'POST', '/patients', '-f', 'first_name=A', '-f', 'last_name=B'], undefined],
  ])('%s meets a 500: sent exactly once', async ([, argv, stdin], { task }) => {
    inject('500:1');
    const r = await run(argv, { env: env(), ...(stdin !== undefined ? { stdin } : {}) });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(1);
    const posts = fx.apiRequests().filter((q) => q.method === 'POST');
    expect(posts).toHaveLength(1);
    expect(posts[0]!.status).toBe(500);
    noStack(r.stderr);
  });

  it('a POST whose connection is reset is not sent again', async ({ task }) => {
    inject('reset:1');
    const r = await run(['sso'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(1);
    expect(fx.apiRequests().filter((q) => q.method === 'POST')).toHaveLength(1);
  });
});

describe('exports complete with every record, or fail and leave no file', () => {
  it.for<FaultMode>(['500', '502', 'reset', 'truncated', '429'])(
    'a transient %s on a later page: complete, every record once',
    async (mode, { task }) => {
      inject(`${mode}:1@2`, '/api/v2/referrals');
      const target = join(dir.path, 'out.ndjson');
      const r = await run(['referrals', 'export', '--format', 'ndjson', '-o', target, '--per-page', '10'], {
        env: env(),
      });
      task.meta.faultsInjected = injectedCount();
      expect(r.code).toBe(0);
      const { readFileSync } = await import('node:fs');
      const ids = readFileSync(target, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).id);
      expect(ids).toEqual(fx.mock.referrals.slice(0, 120).map((x) => x.id));
      if (mode === '429') expect(waited).toEqual([1000]);
      expect(readdirSync(dir.path)).toEqual(['out.ndjson']);
    },
  );

  it.for<[string, string, number]>([
    ['a persistent 500', '500:*@3', 1],
    ['HTML from a proxy, every time', '502:*@3', 1],
    ['the token expiring mid-export', '401:*@4', 3],
    ['the sandbox allowance running out', 'quota', 6],
    ['connections reset, every time', 'reset:*@2', 1],
  ])('%s: exit %i, no file at the target, no temporary file', async ([, spec, code], { task }) => {
    const target = join(dir.path, 'out.csv');
    if (spec === 'quota') {
      // The sandbox quota: a new emulator with an allowance of 5 successful requests.
      const { startMockServer } = await import('../../src/emulator/server.js');
      const limited = await startMockServer({ port: 0, referrals: 120, allowance: 5 });
      try {
        const r = await run(['referrals', 'export', '-o', target, '--per-page', '10'], {
          env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: limited.url, IMAGING_CONFIG_DIR: dir.path },
        });
        task.meta.faultsInjected = 1;
        expect(r.code).toBe(code);
        expect(r.stderr).toContain('sandbox_request_limit_reached');
        expect(readdirSync(dir.path)).toEqual([]);
        noStack(r.stderr);
      } finally {
        await limited.close();
      }
      return;
    }
    inject(spec, '/api/v2/referrals');
    const r = await run(['referrals', 'export', '-o', target, '--per-page', '10'], { env: env() });
    task.meta.faultsInjected = injectedCount();
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(/Export stopped after \d+ referrals: no file was written at/);
    expect(readdirSync(dir.path)).toEqual([]);
    noStack(r.stderr);
  });
});

describe('API, server and network failures through the CLI', () => {
  const fx = mockFixture({ allowance: 3 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  beforeEach(() => fx.reset());

  describe('API errors through the CLI', () => {
    it('expired token: exit 3 with the code and what to do', async () => {
      const r = await runCli(['modalities'], { env: fx.env({ IMAGING_TOKEN: 'mock-expired' }) });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('code:       api_token_expired (authentication_error)');
      expect(r.stderr).toContain('hint: The sandbox token has expired');
      expect(r.stderr).not.toContain('    at ');
    });

    it('invalid token: exit 3', async () => {
      // The local environment sends emulator tokens only: a sandbox pointed at the emulator sends this one.
      const r = await runCli(['modalities'], {
        env: fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'nope' }),
      });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('unauthorized');
    });

    it('sandbox allowance: exit 6 after N successful requests; errors do not count', async () => {
      const env = fx.env({ IMAGING_TOKEN: 'mock-allowance-test' });
      expect((await runCli(['cpt', '73721'], { env })).code).toBe(0);
      expect((await runCli(['modalities'], { env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }) })).code).toBe(
        0,
      );
      expect((await runCli(['law-firms', 'search', ' x'], { env })).code).toBe(0);
      // A 4xx (here a 422) does not use the allowance.
      const dup = [
        'law-firms',
        'create',
        '--name',
        "D'Angelo & D'Amato",
        '--city',
        'Newark',
        '--state',
        'NJ',
      ];
      expect((await runCli(dup, { env })).code).toBe(7);
      expect((await runCli(['modalities'], { env })).code).toBe(0);
      const r = await runCli(['modalities'], { env });
      expect(r.code).toBe(6);
      expect(r.stderr).toContain('sandbox_request_limit_reached');
      expect(r.stderr).toContain('waiting will not help');
      // It is never retried.
      expect(fx.apiRequests().filter((q) => q.status === 429)).toHaveLength(1);
    });

    it('exhausted token straight away: exit 6', async () => {
      const r = await runCli(['modalities'], { env: fx.env({ IMAGING_TOKEN: 'mock-exhausted' }) });
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
      return {
        s,
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: s.url, IMAGING_CONFIG_DIR: '/nonexistent' },
      };
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
      const r = await runCli(['modalities'], { env });
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
      const r = await runCli(['modalities'], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('error: Internal server error');
      expect(r.stderr).toContain('request id: req_500x');
      expect(r.stderr).toContain('hint: The server failed');
      expect(s.seen).toHaveLength(3);
    });

    it('403 with only { error }: exit 5 with the message', async () => {
      const { env } = await server((_q, res) => json(res, 403, { error: 'Forbidden for this account' }));
      const r = await runCli(['modalities'], { env });
      expect(r.code).toBe(5);
      expect(r.stderr).toContain('error: Forbidden for this account');
    });

    it('HTML error page from a proxy: one clear message', async () => {
      const { env } = await server((_q, res) => {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end(
          '<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>',
        );
      });
      const r = await runCli(['modalities'], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('HTML page ("502 Bad Gateway"), probably from a proxy or gateway');
      expect(r.stderr).not.toContain('<center>');
    });

    it('malformed JSON in a 200: exit 1, says so', async () => {
      const { env } = await server((_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[{"id": "x", "name": "MR');
      });
      const r = await runCli(['modalities'], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/not valid JSON \(truncated or malformed JSON, \d+ bytes\)/);
    });

    it('timeout: exit 1 and how to raise it', async () => {
      const { env } = await server((_q, res) => setTimeout(() => json(res, 200, []), 1500));
      const r = await runCli(['modalities', '--timeout', '20'], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('timed out after 20 ms');
      expect(r.stderr).toContain('--timeout');
    });

    it('connection refused: exit 1, names the URL', async () => {
      const { s, env } = await server((_q, res) => json(res, 200, []));
      await s.close();
      servers.length = 0;
      const r = await runCli(['modalities'], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error: connection refused by ${s.url}`);
    });

    it('the token is never sent over plain http to another host', async () => {
      const r = await runCli(['modalities'], {
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
});

describe('the 403 and 404 hints', () => {
  /**
   * `referrals payments ID` and `referrals notifications ID` against the emulator: a table with the
   * columns people read, every field in JSON/NDJSON/CSV, the per-environment path, and the 403 a
   * partner meets until the read is enabled for the account.
   */
  const fx = mockFixture({ referrals: 12 });

  let id = '';

  beforeAll(async () => {
    await fx.start();
    const r = await runCli(['referrals', 'list', '--json'], { env: fx.env() });
    id = JSON.parse(r.stdout)[1].id;
  });

  afterAll(() => fx.stop());

  beforeEach(() => fx.reset());

  it('the notifications 403 names the other gated reads, not itself; every environment is said to be enabled separately', async () => {
    const r = await runCli(['referrals', 'notifications', id], {
      env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }),
    });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/\(as are payment reads, auto-book and FHIR\)/);
    expect(r.stderr).not.toMatch(/as are notification reads/);
    expect(r.stderr).toMatch(
      /for your group on local \(each environment, sandbox and production, is enabled separately\)/,
    );
  });

  it('the 404 hint shows the default path with {id}, not %7Bid%7D', async () => {
    const r = await runCli(['referrals', 'payments', '00000000-0000-4000-8000-00000000ffff'], {
      env: fx.env(),
    });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/the default is a guess \(GET \/api\/v2\/referrals\/\{id\}\/payments\)/);
    expect(r.stderr).not.toContain('%7B');
  });
});
