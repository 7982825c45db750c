import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bothForms, expectUsageError, hasEscapes, piped } from '../fake-io.js';
import { json, mockFixture, run, tempDir, testServer } from '../helpers.js';
import { paneFixture } from '../terminal.js';

const fx = mockFixture({ referrals: 60 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('imaging api', () => {
  it('prints the answer as indented JSON, the same on a terminal and in a pipe', async () => {
    const { terminal, piped: p } = await bothForms(['api', '/modalities'], { env: fx.env() });
    for (const r of [terminal, p]) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
    }
    expect(hasEscapes(p.stdout)).toBe(false);
    const body = JSON.parse(p.stdout);
    expect(body.map((m: { name: string }) => m.name)).toContain('MRI');
    expect(p.stdout).toBe(`${JSON.stringify(body, null, 2)}\n`);
    expect(JSON.parse(terminal.stdout)).toEqual(body);
    expect(fx.apiRequests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v2/modalities',
      'GET /api/v2/modalities',
    ]);
  });

  it('--paginate follows every page into one array', async () => {
    const r = await piped(['api', '/referrals?per_page=25', '--paginate'], { env: fx.env() });
    expect(r.code).toBe(0);
    const all = JSON.parse(r.stdout);
    expect(all).toHaveLength(60);
    expect(fx.apiRequests()).toHaveLength(3);
  });

  it("sends fields as a JSON body, and the server's errors keep the contract's exit codes", async () => {
    const rejected = await piped(['api', 'POST', '/law_firms', '-F', 'name=Zed'], { env: fx.env() });
    expect(rejected.code).toBe(7);
    expect(rejected.stdout).toBe('');
    expect(rejected.stderr).toMatch(/^error: .*\n {2}status: {5}422 Unprocessable Entity\n/);
    const missing = await piped(['api', '/nope'], { env: fx.env() });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('status:     404 Not Found');
  });

  it('refuses a bad method, --paginate on a write, or a malformed field, before any request', async () => {
    const seen = () => fx.apiRequests().length;
    expectUsageError(
      await piped(['api', 'FETCH', '/modalities'], { env: fx.env() }),
      /unknown HTTP method "FETCH"/,
      seen(),
    );
    expectUsageError(
      await piped(['api', 'POST', '/law_firms', '--paginate'], { env: fx.env() }),
      /--paginate works with GET only/,
      seen(),
    );
    expectUsageError(
      await piped(['api', 'POST', '/law_firms', '-F', 'a[b=1'], { env: fx.env() }),
      /field name "a\[b"/,
      seen(),
    );
    expectUsageError(await piped(['api'], { env: fx.env() }), /missing required argument/, seen());
  });
});

describe('imaging api', () => {
  const fx = mockFixture({ referrals: 60 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  beforeEach(() => fx.reset());

  it('GETs a path with or without /api/v2 and prints JSON', async () => {
    const a = await run(['api', '/modalities'], { env: fx.env() });
    const b = await run(['api', 'GET', '/api/v2/modalities'], { env: fx.env() });
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout)).toEqual(JSON.parse(b.stdout));
    expect(fx.apiRequests().map((q) => q.path)).toEqual(['/api/v2/modalities', '/api/v2/modalities']);
  });

  it('sends fields as query parameters on GET', async () => {
    await run(
      [
        'api',
        'GET',
        'icd10_codes',
        '-f',
        'q=knee pain',
        '-F',
        'per_page=5',
        '-f',
        'ids[]=a',
        '-f',
        'ids[]=b',
      ],
      { env: fx.env() },
    );
    expect(fx.apiRequests()[0]).toMatchObject({
      method: 'GET',
      path: '/api/v2/icd10_codes?per_page=5&q=knee%20pain&ids[]=a&ids[]=b',
    });
  });

  it('POSTs fields as a nested JSON body (an endpoint the spec names without shapes)', async () => {
    const r = await run(
      [
        'api',
        'POST',
        '/patients',
        '-f',
        'patient[first_name]=Ada',
        '-f',
        'patient[last_name]=Lovelace',
        '-F',
        'patient[weight]=130',
      ],
      { env: fx.env() },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace' });
  });

  it('sends --input as the body, and checks it is JSON first', async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'p.json');
      writeFileSync(file, '{"first_name":"Grace","last_name":"Hopper"}');
      const r = await run(['api', 'POST', 'patients', '--input', file], { env: fx.env() });
      expect(JSON.parse(r.stdout).last_name).toBe('Hopper');
      const bad = await run(['api', 'POST', 'patients', '--input', '-'], {
        env: fx.env(),
        stdin: 'first_name=Grace',
      });
      expect(bad.code).toBe(2);
      expect(fx.apiRequests()).toHaveLength(1);
    } finally {
      dir.cleanup();
    }
  });

  it('--paginate follows meta and prints one array of all items', async () => {
    const r = await run(['api', '/referrals', '--paginate', '-F', 'per_page=7'], { env: fx.env() });
    expect(JSON.parse(r.stdout)).toHaveLength(60);
    expect(fx.apiRequests()).toHaveLength(9);
  });

  it('has the usual errors and exit codes', async () => {
    const id = fx.mock.referrals.at(0).id;
    const forbidden = await run(['api', `/referrals/${id}/payments`], {
      env: fx.env({ IMAGING_TOKEN: 'mock-disabled' }),
    });
    expect(forbidden.code).toBe(5);
    expect(forbidden.stderr).toContain('endpoint_not_enabled');
    const ok = await run(['api', `/referrals/${id}/payments`], { env: fx.env() });
    expect(JSON.parse(ok.stdout)).toHaveProperty('payments');
    expect((await run(['api', '/nowhere'], { env: fx.env() })).code).toBe(4);
    const invalid = await run(['api', 'POST', '/patients', '-f', 'x=1'], { env: fx.env() });
    expect(invalid.code).toBe(7);
    expect(invalid.stderr).toContain("- First name can't be blank");
  });

  it('refuses full URLs (the token goes only to the configured host) and unknown methods', async () => {
    const url = await run(['api', 'https://evil.example.com/api/v2/modalities'], { env: fx.env() });
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('give a path, not a full URL');
    expect((await run(['api', 'FETCH', '/modalities'], { env: fx.env() })).code).toBe(2);
    expect((await run(['api', 'POST', '/x', '--paginate'], { env: fx.env() })).code).toBe(2);
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('never repeats a POST', async () => {
    const srv = await testServer((_req, res) => json(res, 500, { message: 'boom' }));
    try {
      const r = await run(['api', 'POST', '/patients', '-f', 'first_name=A'], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: '/nonexistent' },
      });
      expect(r.code).toBe(1);
      expect(srv.seen).toHaveLength(1);
    } finally {
      await srv.close();
    }
  });

  it('writes a non-JSON answer as raw bytes', async () => {
    const pdf = Buffer.from('%PDF-1.7\n\u0000\u00ff binary');
    const srv = await testServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(pdf);
    });
    try {
      const r = await run(['api', '/documents/1'], {
        env: { IMAGING_ENV: 'local', IMAGING_BASE_URL: srv.url, IMAGING_CONFIG_DIR: '/x' },
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(pdf.toString('utf8'));
    } finally {
      await srv.close();
    }
  });
});

describe('imaging api: the method, said and confirmed', () => {
  const fx = mockFixture({ referrals: 20 });

  let dir: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    await fx.start();
  });

  afterAll(async () => {
    await fx.stop();
  });

  beforeEach(() => {
    dir = tempDir();
    fx.reset();
  });

  afterEach(() => dir.cleanup());

  it('fields make it a POST, as in gh api, and stderr says so and why', async () => {
    const r = await run(['api', '/referrals', '-F', 'per_page=5'], { env: fx.env() });
    expect(fx.apiRequests()[0]!.method).toBe('POST');
    expect(r.stderr).toContain('Sending POST: fields make a request a POST, as in gh api');
    expect(r.stderr).toContain('imaging api GET /referrals');
    const get = await run(['api', 'GET', '/referrals', '-F', 'per_page=5'], { env: fx.env() });
    expect(get.code).toBe(0);
    expect(get.stderr).toBe('');
    expect(fx.apiRequests()[1]!.method).toBe('GET');
  });

  it.for(['GET', 'delete'])(
    '`imaging api %s` (a method, no path) is a usage error, nothing sent',
    async (m) => {
      const r = await run(['api', m], { env: fx.env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`"${m}" is an HTTP method: give the path after it`);
      expect(fx.apiRequests()).toHaveLength(0);
    },
  );

  it('an upper-case UUID in the path goes in lower case', async () => {
    const id = (
      JSON.parse((await run(['referrals', 'list', '--json'], { env: fx.env() })).stdout) as Array<{
        id: string;
      }>
    )[0]!.id;
    const r = await run(['api', `/referrals/${id.toUpperCase()}`], { env: fx.env() });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).id).toBe(id);
  });

  describe('in production, any non-GET asks first', () => {
    const env = () => ({
      IMAGING_ENV: 'production',
      IMAGING_BASE_URL: fx.mock.url.replace('127.0.0.1', 'localhost'),
      IMAGING_TOKEN: 'mock-prod',
      IMAGING_CONFIG_DIR: dir.path,
    });
    const argv = ['api', 'PATCH', '/referrals/x', '-f', 'note=hello'];

    it('refused without a terminal (exit 2), nothing sent', async () => {
      const r = await run(argv, { env: env() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('imaging api PATCH in production needs confirmation');
      expect(r.stderr).toContain('--yes');
      expect(fx.apiRequests()).toHaveLength(0);
    });

    it('on a terminal: declined sends nothing; accepted or --yes sends', async () => {
      const asked: string[] = [];
      const prompter = (answer: boolean) => ({
        secret: async () => '',
        confirm: async (m: string) => {
          asked.push(m);
          return answer;
        },
      });
      const no = await run(argv, { env: env(), stdinIsTTY: true, deps: { prompter: prompter(false) } });
      expect(no.code).toBe(1);
      expect(no.stderr).toContain('Nothing was sent.');
      expect(asked[0]).toMatch(/^Send PATCH \/referrals\/x to PRODUCTION \(http:\/\/localhost:\d+\)\?$/);
      expect(fx.apiRequests()).toHaveLength(0);
      await run(argv, { env: env(), stdinIsTTY: true, deps: { prompter: prompter(true) } });
      expect(fx.apiRequests()).toHaveLength(1);
      await run([...argv, '--yes'], { env: env() });
      expect(fx.apiRequests()).toHaveLength(2);
      expect(asked).toHaveLength(2);
    });

    it('a GET is never asked about', async () => {
      const r = await run(['api', '/modalities'], { env: env() });
      expect(r.code).toBe(0);
      expect(fx.apiRequests()).toHaveLength(1);
    });
  });
});

describe('imaging api: the production question and UUIDs', () => {
  const fx = mockFixture({ referrals: 60 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  const term = paneFixture();

  beforeEach(() => {
    fx.reset();
    fx.mock.faults.clear();
  });

  const inPane = (args: string[], env: NodeJS.ProcessEnv, cols = 80) => term.run(args, env, cols);

  describe("imaging api's production question at an 80-column terminal", () => {
    it('is wrapped to the width, words whole: the URL on one line, answered on the last', async () => {
      const baseUrl = fx.mock.url.replace('127.0.0.1', 'localhost');
      const env = fx.env({
        IMAGING_ENV: 'production',
        IMAGING_BASE_URL: baseUrl,
        IMAGING_TOKEN: 'mock-prod',
      });
      const path = '/referrals/3212c76a-c27e-4ca2-9e90-bb9c865c1630';
      const pane = await inPane(['api', 'PATCH', path, '-f', 'note=hello'], env);
      const lines = await pane.waitForScreen((l) => l.some((x) => x.includes('[y/N]')));
      const asked = lines.slice(lines.findIndex((l) => l.startsWith('Send PATCH')));
      expect(asked.length).toBeGreaterThan(1); // too long for one line
      for (const l of asked) expect(l.length).toBeLessThanOrEqual(80);
      expect(asked.join(' ')).toBe(`Send PATCH ${path} to PRODUCTION (${baseUrl})? [y/N]`);
      expect(asked.some((l) => l.includes(`(${baseUrl})?`))).toBe(true);
      await pane.keys('n', 'Enter');
      expect(await pane.exited()).toBe(1);
      expect((await pane.screen()).join('\n')).toContain('Nothing was sent.');
      expect(fx.apiRequests()).toHaveLength(0);
    });
  });

  describe('imaging api sends every UUID in lower case', () => {
    const A = '3212C76A-C27E-4CA2-9E90-BB9C865C1630';
    const B = 'AB12C76A-C27E-4CA2-9E90-BB9C865C16FF';
    it('in -f/-F fields (body and query), lists of them, and the path with its query string', async () => {
      const server = await testServer((_req, res) => json(res, 200, { data: {} }));
      try {
        const env = {
          IMAGING_ENV: 'sandbox',
          IMAGING_BASE_URL: server.url,
          IMAGING_TOKEN: 'mock-uuids',
          IMAGING_CONFIG_DIR: term.dir.path,
        };
        const post = await run(
          [
            'api',
            'POST',
            `/referrals/${A}/notes?visit=${B}&ids=${A}%2C${B}&q=Hello`,
            '-f',
            `referral_id=${A}`,
            '-F',
            `ids=${A},${B}`,
            '-f',
            'note=KEEP Case',
          ],
          { env },
        );
        expect(post.code).toBe(0);
        const get = await run(
          ['api', 'GET', '/icd10', '-f', `ids[]=${B}`, '-F', `modality=${A}`, '-f', 'q=Knee'],
          { env },
        );
        expect(get.code).toBe(0);
        const [p, g] = server.seen;
        const a = A.toLowerCase();
        const b = B.toLowerCase();
        expect(p!.url).toBe(`/api/v2/referrals/${a}/notes?visit=${b}&ids=${a},${b}&q=Hello`);
        expect(JSON.parse(p!.body)).toEqual({ referral_id: a, ids: `${a},${b}`, note: 'KEEP Case' });
        const q = new URL(g!.url, 'http://x').searchParams;
        expect(q.getAll('ids[]')).toEqual([b]);
        expect(q.get('modality')).toBe(a);
        expect(q.get('q')).toBe('Knee'); // not a UUID: as given
      } finally {
        await server.close();
      }
    });
  });
});

describe('imaging api builds bodies and queries without prototypes', () => {
  let srv: Awaited<ReturnType<typeof testServer>> | undefined;
  afterEach(async () => {
    await srv?.close();
    srv = undefined;
  });
  const env = () => ({
    IMAGING_ENV: 'local',
    IMAGING_BASE_URL: srv!.url,
    IMAGING_CONFIG_DIR: '/nonexistent',
  });

  it('-f "__proto__[x]=1" is a field in the body; Object.prototype is untouched', async () => {
    srv = await testServer((_req, res) => json(res, 201, { ok: true }));
    const r = await run(
      [
        'api',
        'POST',
        '/patients',
        '-f',
        '__proto__[x]=1',
        '-F',
        'constructor[prototype][y]=2',
        '-f',
        'name=A',
      ],
      { env: env() },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(srv.seen[0]!.body).toBe('{"constructor":{"prototype":{"y":2}},"__proto__":{"x":"1"},"name":"A"}');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(({} as Record<string, unknown>).y).toBeUndefined();
  });

  it('-f "__proto__=1" and --param __proto__=… go into the query', async () => {
    srv = await testServer((_req, res) => json(res, 200, { referrals: [], meta: { current_page: 1 } }));
    const a = await run(['api', 'GET', '/patients', '-f', '__proto__=1', '-f', 'a[]=2'], { env: env() });
    expect(a.code).toBe(0);
    const b = await run(['referrals', 'list', '--param', '__proto__=x', '--json'], { env: env() });
    expect(b.code).toBe(0);
    const queries = srv.seen.map((s) => decodeURIComponent(new URL(s.url, 'http://x').search));
    expect(queries[0]).toContain('__proto__=1');
    expect(queries[0]).toContain('a[]=2');
    expect(queries[1]).toContain('__proto__=x');
  });

  it('a key that both holds a value and nests is a usage error, not a crash', async () => {
    srv = await testServer((_req, res) => json(res, 201, {}));
    const r = await run(['api', 'POST', '/patients', '-f', 'a=1', '-f', 'a[b]=2'], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('a already holds a value');
    expect(srv.seen).toHaveLength(0);
  });
});

describe('imaging api: gh-style fields, headers and output', () => {
  const env = (url: string) => ({
    IMAGING_ENV: 'local',
    IMAGING_BASE_URL: url,
    IMAGING_CONFIG_DIR: '/nonexistent',
  });

  it('-F key=@file and key=@- send the content of the file or of standard input', async () => {
    const srv = await testServer((_req, res) => json(res, 201, { ok: true }));
    const dir = tempDir();
    const file = join(dir.path, 'ref.json');
    writeFileSync(file, '{"a":1}\n');
    try {
      const r = await run(
        ['api', 'POST', '/notes', '-F', `referral=@${file}`, '-F', 'text=@-', '-F', 'n=3', '-f', 'raw=@x'],
        { env: env(srv.url), stdin: 'from stdin' },
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(srv.seen).toHaveLength(1);
      expect(JSON.parse(srv.seen[0]!.body)).toEqual({
        referral: '{"a":1}\n',
        text: 'from stdin',
        n: 3,
        raw: '@x',
      });
    } finally {
      await srv.close();
      dir.cleanup();
    }
  });

  it('a missing @file, or standard input read twice, is a usage error before any request', async () => {
    const srv = await testServer((_req, res) => json(res, 200, {}));
    try {
      expectUsageError(
        await piped(['api', 'POST', '/notes', '-F', 'referral=@/nonexistent/ref.json'], {
          env: env(srv.url),
        }),
        /-F referral: cannot read \/nonexistent\/ref\.json: no such file/,
        srv.seen.length,
      );
      expectUsageError(
        await piped(['api', 'POST', '/notes', '-F', 'a=@-', '-F', 'b=@-'], { env: env(srv.url), stdin: 'x' }),
        /standard input.*read once/,
        srv.seen.length,
      );
      expect(srv.seen).toHaveLength(0);
    } finally {
      await srv.close();
    }
  });

  it('-H adds request headers, and refuses the ones the client owns or a value with a line break', async () => {
    const srv = await testServer((_req, res) => json(res, 200, { ok: true }));
    try {
      const r = await run(
        [
          'api',
          '/modalities',
          '-H',
          'X-Trace: abc',
          '-H',
          'Accept: application/fhir+json',
          '-H',
          'x-trace:def',
        ],
        { env: env(srv.url) },
      );
      expect(r.code).toBe(0);
      expect(srv.seen).toHaveLength(1);
      expect(srv.seen[0]!.headers['x-trace']).toBe('abc, def');
      expect(srv.seen[0]!.headers.accept).toBe('application/fhir+json');
      expect(srv.seen[0]!.headers.authorization).toMatch(/^Bearer /);
      srv.seen.length = 0;
      for (const [h, message] of [
        ['Authorization: Bearer stolen', /-H Authorization: imaging sets this header itself/],
        ['host: evil.example', /-H host:/],
        ['Content-Length: 5', /-H Content-Length:/],
        ['Transfer-Encoding: chunked', /-H Transfer-Encoding:/],
        ['Connection: close', /-H Connection:/],
        ['Upgrade: h2c', /-H Upgrade:/],
        ['X-A: 1\r\nAuthorization: Bearer x', /-H X-A: the value holds a line break/],
        ['no colon', /give a header as "Name: value"/],
      ] as const) {
        expectUsageError(
          await piped(['api', '/modalities', '-H', h], { env: env(srv.url) }),
          message,
          srv.seen.length,
        );
      }
    } finally {
      await srv.close();
    }
  });

  it('-i prints the status line and cleaned headers before the body; --silent prints no body', async () => {
    const srv = await testServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-note': 'red \u009b31mtext' });
      res.end('{"ok":true}');
    });
    try {
      const r = await piped(['api', '/modalities', '-i'], { env: env(srv.url) });
      expect(r.code).toBe(0);
      const [head, body] = r.stdout.split('\n\n');
      const lines = head!.split('\n');
      expect(lines[0]).toBe('HTTP/1.1 200 OK');
      expect(lines).toContain('content-type: application/json');
      const note = lines.find((l) => l.startsWith('x-note:'));
      expect(note).toMatch(/^x-note: red .+31mtext$/);
      expect(note).not.toContain('\u009b');
      expect(hasEscapes(r.stdout)).toBe(false);
      expect(JSON.parse(body!)).toEqual({ ok: true });
      const silent = await piped(['api', '/modalities', '--silent'], { env: env(srv.url) });
      expect(silent.code).toBe(0);
      expect(silent.stdout).toBe('');
      const both = await piped(['api', '/modalities', '-i', '--silent'], { env: env(srv.url) });
      expect(both.stdout).toMatch(/^HTTP\/1\.1 200 OK\n[\s\S]*\n\n$/);
      expect(both.stdout).not.toContain('"ok"');
      expect(srv.seen).toHaveLength(3);
    } finally {
      await srv.close();
    }
  });

  it('-i on an error status prints the status line and cleaned headers, then the error block (exit 4)', async () => {
    const srv = await testServer((_req, res) => {
      res.writeHead(404, {
        'content-type': 'application/json',
        'x-request-id': 'req-404',
        'x-note': 'a\u009b31mb',
      });
      res.end('{"error":"Not Found","message":"No such referral"}');
    });
    try {
      const r = await piped(['api', '/referrals/x', '-i'], { env: env(srv.url) });
      expect(r.code).toBe(4);
      const lines = r.stdout.split('\n');
      expect(lines[0]).toBe('HTTP/1.1 404 Not Found');
      expect(lines).toContain('x-request-id: req-404');
      expect(r.stdout).not.toContain('\u009b');
      expect(r.stdout.endsWith('\n\n')).toBe(true);
      expect(r.stderr).toMatch(/^error: No such referral/);
      const plainRun = await piped(['api', '/referrals/x'], { env: env(srv.url) });
      expect(plainRun.stdout).toBe('');
    } finally {
      await srv.close();
    }
  });

  it('-X/--method names the method as in gh api; the positional form still works; two different ones are exit 2', async () => {
    const srv = await testServer((_req, res) => json(res, 200, { ok: true }));
    try {
      const get = await piped(['api', '-X', 'GET', '/modalities', '-f', 'q=knee'], { env: env(srv.url) });
      expect(get.code, get.stderr).toBe(0);
      expect(get.stderr).not.toContain('Sending POST');
      const put = await piped(['api', '/law_firms/1', '--method', 'put', '-F', 'a=1'], { env: env(srv.url) });
      expect(put.code, put.stderr).toBe(0);
      const same = await piped(['api', 'PATCH', '/law_firms/1', '-X', 'patch'], { env: env(srv.url) });
      expect(same.code, same.stderr).toBe(0);
      expect(srv.seen.map((q) => `${q.method} ${q.url} ${q.body}`)).toEqual([
        'GET /api/v2/modalities?q=knee ',
        'PUT /api/v2/law_firms/1 {"a":1}',
        'PATCH /api/v2/law_firms/1 ',
      ]);
      const seen = srv.seen.length;
      expectUsageError(
        await piped(['api', 'POST', '/law_firms', '-X', 'GET'], { env: env(srv.url) }),
        /two methods given: POST before the path and GET with -X\/--method/,
        srv.seen.length - seen,
      );
      expectUsageError(
        await piped(['api', '-X', 'FETCH', '/modalities'], { env: env(srv.url) }),
        /-X\/--method: unknown HTTP method "FETCH"/,
        srv.seen.length - seen,
      );
    } finally {
      await srv.close();
    }
  });

  /** A FHIR server: /api/v2/fhir/DiagnosticReport in three pages, the next link on page 1 absolute. */
  async function fhirServer(nextOfPage1?: (own: string) => string) {
    let own = '';
    const srv = await testServer((req, res) => {
      const u = new URL(req.url ?? '/', own);
      const page = Number(u.searchParams.get('_page') ?? '1');
      const link =
        page === 1
          ? [
              { relation: 'self', url: `${own}${u.pathname}` },
              {
                relation: 'next',
                url: nextOfPage1 ? nextOfPage1(own) : `${own}/api/v2/fhir/DiagnosticReport?_page=2`,
              },
            ]
          : page === 2
            ? [{ relation: 'next', url: 'DiagnosticReport?_page=3' }]
            : [];
      json(res, 200, {
        resourceType: 'Bundle',
        type: 'searchset',
        total: 5,
        link,
        entry: [page, page * 10]
          .filter((n) => n !== 30)
          .map((n) => ({ resource: { resourceType: 'DiagnosticReport', id: `r${n}` } })),
      });
    });
    own = srv.url;
    return srv;
  }

  it("--paginate follows a FHIR Bundle's next links into one Bundle, or an entry a line", async () => {
    const srv = await fhirServer();
    try {
      const r = await piped(['api', '/fhir/DiagnosticReport', '--paginate'], { env: env(srv.url) });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const merged = JSON.parse(r.stdout);
      expect(merged.resourceType).toBe('Bundle');
      expect(merged.type).toBe('searchset');
      expect(merged.link).toBeUndefined();
      const ids = ['r1', 'r10', 'r2', 'r20', 'r3'];
      expect(merged.entry.map((e: { resource: { id: string } }) => e.resource.id)).toEqual(ids);
      expect(srv.seen.map((s) => new URL(s.url, srv.url).searchParams.get('_page'))).toEqual([
        null,
        '2',
        '3',
      ]);
      for (const s of srv.seen) expect(s.headers.authorization).toMatch(/^Bearer /);
      srv.seen.length = 0;
      const nd = await piped(['api', '/fhir/DiagnosticReport', '--paginate', '--format', 'ndjson'], {
        env: env(srv.url),
      });
      expect(nd.code).toBe(0);
      expect(
        nd.stdout
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l).resource.id),
      ).toEqual(ids);
      expect(srv.seen).toHaveLength(3);
    } finally {
      await srv.close();
    }
  });

  it('--paginate does not follow a FHIR next link to another origin or out of /api/v2', async () => {
    const other = await testServer((_req, res) => json(res, 200, { resourceType: 'Bundle', entry: [] }));
    const away = await fhirServer(() => `${other.url}/api/v2/fhir/DiagnosticReport?_page=2`);
    const up = await fhirServer((own) => `${own}/admin/DiagnosticReport?_page=2`);
    try {
      for (const [srv, where] of [
        [away, other.url],
        [up, `${up.url}/admin/DiagnosticReport`],
      ] as const) {
        const r = await piped(['api', '/fhir/DiagnosticReport', '--paginate'], { env: env(srv.url) });
        expect(r.code).toBe(1);
        expect(r.stdout).toBe('');
        expect(r.stderr).toContain(`its next link leads outside ${srv.url}/api/v2 (to ${where}`);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(srv.seen).toHaveLength(1);
      }
      expect(other.seen).toHaveLength(0);
    } finally {
      await Promise.all([other.close(), away.close(), up.close()]);
    }
  });

  it('--paginate reads a Bundle page of 200,000 entries (no stack overflow), as JSON and as NDJSON', async () => {
    // As /tmp/atk23/fhirbig.mjs: one page far larger than a call's argument list may be.
    const big = JSON.stringify(
      Array.from({ length: 200_000 }, (_, i) => ({ resource: { resourceType: 'Patient', id: `p${i}` } })),
    );
    const srv = await testServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/fhir+json' });
      if ((req.url ?? '').includes('_page=2'))
        return res.end(
          '{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient","id":"last"}}]}',
        );
      res.end(
        `{"resourceType":"Bundle","link":[{"relation":"next","url":"/api/v2/fhir/Patient?_page=2"}],"entry":${big}}`,
      );
    });
    try {
      const r = await piped(['api', '/fhir/Patient', '--paginate'], { env: env(srv.url) });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).entry).toHaveLength(200_001);
      const nd = await piped(['api', '/fhir/Patient', '--paginate', '--format', 'ndjson'], {
        env: env(srv.url),
      });
      expect(nd.code).toBe(0);
      const rows = nd.stdout.trimEnd().split('\n');
      expect(rows).toHaveLength(200_001);
      expect(JSON.parse(rows[199_999]!).resource.id).toBe('p199999');
    } finally {
      await srv.close();
    }
  }, 60_000);

  it('--paginate stops within a few requests on endless pages that repeat the same entries', async () => {
    // As /tmp/atk23/fhir.mjs "endless": every next link differs by a counter, every page is the same.
    const srv = await testServer((req, res) => {
      const p = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('p') ?? '0');
      json(res, 200, {
        resourceType: 'Bundle',
        link: [{ relation: 'next', url: `/api/v2/fhir/endless?p=${p + 1}` }],
        entry: [{ resource: { resourceType: 'Patient', id: 'p1' } }],
      });
    });
    try {
      const r = await piped(['api', '/fhir/endless', '--paginate', '--format', 'ndjson'], {
        env: env(srv.url),
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/stopped paging the Bundle at \/fhir\/endless: page 2 repeats page 1/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(srv.seen.length).toBeLessThanOrEqual(3);
    } finally {
      await srv.close();
    }
  });

  it('a javascript: next link is named by its scheme', async () => {
    const srv = await testServer((_req, res) =>
      json(res, 200, {
        resourceType: 'Bundle',
        link: [{ relation: 'next', url: 'javascript:alert(1)' }],
        entry: [],
      }),
    );
    try {
      const r = await piped(['api', '/fhir/x', '--paginate'], { env: env(srv.url) });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('(to a javascript: URL)');
      expect(r.stderr).not.toContain('null');
    } finally {
      await srv.close();
    }
  });

  it('-F with an integer a double cannot hold sends its exact digits, as a string (as gh)', async () => {
    const srv = await testServer((_req, res) => json(res, 201, { ok: true }));
    try {
      const r = await piped(
        ['api', 'POST', '/notes', '-F', 'x=12345678901234567890', '-F', 'y=9007199254740993', '-F', 'z=42'],
        { env: env(srv.url) },
      );
      expect(r.code).toBe(0);
      expect(JSON.parse(srv.seen[0]!.body)).toEqual({
        x: '12345678901234567890',
        y: '9007199254740993',
        z: 42,
      });
    } finally {
      await srv.close();
    }
  });

  it('-H refuses a control or non-ASCII value and TE, Trailer, HTTP2-Settings, before any request', async () => {
    const srv = await testServer((_req, res) => json(res, 200, { ok: true }));
    try {
      for (const [h, message] of [
        ['X-A: a\u0001b', /-H X-A: the value holds a control or non-ASCII character/],
        ['X-A: caf\u00e9', /-H X-A: the value holds a control or non-ASCII character/],
        ['X-A: a\u007fb', /-H X-A: the value holds a control or non-ASCII character/],
        ['TE: trailers', /-H TE: imaging sets this header itself/],
        ['Trailer: X-B', /-H Trailer: imaging sets this header itself/],
        ['Trailers: X-B', /-H Trailers: imaging sets this header itself/],
        ['HTTP2-Settings: AAMAAABkAAQAAP__', /-H HTTP2-Settings: imaging sets this header itself/],
      ] as const) {
        expectUsageError(
          await piped(['api', '/modalities', '-H', h], { env: env(srv.url) }),
          message,
          srv.seen.length,
        );
      }
    } finally {
      await srv.close();
    }
  });

  it('--paginate sends the -H headers with every page, meta pages and FHIR pages', async () => {
    const srv = await testServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const page = Number(u.searchParams.get('page') ?? '1');
      if (u.pathname.startsWith('/api/v2/fhir'))
        return json(res, 200, {
          resourceType: 'Bundle',
          link: u.searchParams.has('_page') ? [] : [{ relation: 'next', url: '/api/v2/fhir/R?_page=2' }],
          entry: [{ resource: { resourceType: 'R', id: u.searchParams.has('_page') ? 'b' : 'a' } }],
        });
      json(res, 200, { items: [{ id: `i${page}` }], meta: { current_page: page, total_pages: 2 } });
    });
    try {
      const meta = await piped(['api', '/items', '--paginate', '-H', 'X-Trace: abc'], { env: env(srv.url) });
      expect(meta.code).toBe(0);
      const fhir = await piped(['api', '/fhir/R', '--paginate', '-H', 'X-Trace: abc'], { env: env(srv.url) });
      expect(fhir.code).toBe(0);
      expect(srv.seen).toHaveLength(4);
      for (const s of srv.seen) expect(s.headers['x-trace']).toBe('abc');
    } finally {
      await srv.close();
    }
  });

  it('the 10 MiB cap holds for the whole body, not each -F @file field', async () => {
    const srv = await testServer((_req, res) => json(res, 201, { ok: true }));
    const dir = tempDir();
    try {
      const six = join(dir.path, 'six.txt');
      writeFileSync(six, 'a'.repeat(6 * 1024 * 1024));
      expectUsageError(
        await piped(['api', 'POST', '/notes', '-F', `a=@${six}`, '-F', `b=@${six}`], { env: env(srv.url) }),
        /-F b: the files of the -F fields add up to more than 10 MiB/,
        srv.seen.length,
      );
      // Under the cap as read, over it once each quote is escaped in the JSON body.
      const quotes = join(dir.path, 'quotes.txt');
      writeFileSync(quotes, '"'.repeat(6 * 1024 * 1024));
      expectUsageError(
        await piped(['api', 'POST', '/notes', '-F', `a=@${quotes}`], { env: env(srv.url) }),
        /the request body would be 12 MiB, larger than 10 MiB/,
        srv.seen.length,
      );
    } finally {
      dir.cleanup();
      await srv.close();
    }
  });
});
