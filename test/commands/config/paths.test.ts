import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import { OPERATION_NAMES, OPERATIONS } from '../../../src/api/endpoints/operations.js';
import { operationRoute, sendOperation } from '../../../src/config/operations.js';
import { ConfigStore } from '../../../src/config/store.js';
import { ApiError, formatError, UsageError } from '../../../src/errors.js';
import { clean } from '../../../src/output/text.js';
import { expectUsageError, piped } from '../../fake-io.js';
import { json, run, tempDir, testServer } from '../../helpers.js';
import '../../reliability.js';

// Every unpublished operation takes `path.<op>` per environment: '[METHOD] /api/v2/…', checked as the
// first two (payments, notifications) always were, and read back through one function.

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());
const env = (extra: NodeJS.ProcessEnv = {}) => ({ IMAGING_CONFIG_DIR: dir.path, ...extra });
const stored = () => JSON.parse(readFileSync(join(dir.path, 'config.json'), 'utf8'));

const EXAMPLES: Record<string, string> = {
  payments: '/api/v2/billing/referrals/{id}/payments',
  notifications: '/api/v2/referrals/{id}/messages',
  referral_update: '/api/v2/partner/referrals/{id}',
  auto_book: '/api/v2/referrals/{id}/auto-book',
  sandbox_advance: '/api/v2/sandbox/visit/{id}/status',
  sandbox_fixture: '/api/v2/sandbox/fixture',
  sandbox_test_webhook: '/api/v2/sandbox/webhooks/test',
};

describe('config set/get/unset path.<operation>', () => {
  it.for(OPERATION_NAMES)('path.%s: default, set with a method, read back, listed, unset', async (op) => {
    const spec = OPERATIONS[op];
    const d = await piped(['config', 'get', `path.${op}`, '--env', 'production'], { env: env() });
    expect([d.code, d.stdout, d.stderr]).toEqual([
      0,
      `${spec.method} ${spec.path}\n`,
      `path.${op}: the default (production)\n`,
    ]);
    const path = EXAMPLES[op]!;
    const s = await piped(['config', 'set', `path.${op}`, `put ${path}`, '--env', 'production'], {
      env: env(),
    });
    expect(s.code, s.stderr).toBe(0);
    expect(s.stderr).toBe(`path.${op} for production set to PUT ${path}.\n`);
    expect(stored().environments.production.paths).toEqual({ [op]: `PUT ${path}` });
    const g = await piped(['config', 'get', `path.${op}`, '--env', 'production', '--json'], { env: env() });
    expect(JSON.parse(g.stdout)).toEqual({
      key: `path.${op}`,
      value: `PUT ${path}`,
      method: 'PUT',
      path,
      source: 'config',
      environment: 'production',
    });
    const l = await piped(['config', 'list'], { env: env() });
    expect(l.stdout).toContain(`path.${op}`);
    expect(l.stdout).toContain(`PUT ${path}`);
    // The sandbox keeps its default.
    const other = await piped(['config', 'get', `path.${op}`], { env: env() });
    expect(other.stdout).toBe(`${spec.method} ${spec.path}\n`);
    const u = await piped(['config', 'unset', `path.${op}`, '--env', 'production'], { env: env() });
    expect(u.code).toBe(0);
    expect(u.stderr).toBe(
      `path.${op} for production unset (the default ${spec.method} ${spec.path} is used).\n`,
    );
    expect(stored().environments?.production?.paths).toBeUndefined();
  });

  it("a bare path takes the operation's own method and is stored bare, as before; so is the own method named", async () => {
    for (const value of [
      '/api/v2/x/{id}/book',
      'POST /api/v2/x/{id}/book',
      '  post   /api/v2/x/{id}/book ',
    ]) {
      const s = await piped(['config', 'set', 'path.auto_book', value], { env: env() });
      expect(s.code, s.stderr).toBe(0);
      expect(stored().environments.sandbox.paths.auto_book).toBe('/api/v2/x/{id}/book');
    }
    const g = await piped(['config', 'get', 'path.auto-book', '--json'], { env: env() });
    expect(JSON.parse(g.stdout)).toMatchObject({
      method: 'POST',
      path: '/api/v2/x/{id}/book',
      source: 'config',
    });
    // A bare path stored by an older version is read as it always was.
    writeFileSync(
      join(dir.path, 'config.json'),
      JSON.stringify({ environments: { sandbox: { paths: { payments: '/api/v2/old/{id}/payments' } } } }),
      { mode: 0o600 },
    );
    const old = await piped(['config', 'get', 'path.payments', '--json'], { env: env() });
    expect(JSON.parse(old.stdout)).toMatchObject({ method: 'GET', path: '/api/v2/old/{id}/payments' });
  });

  it.for([
    ['auto_book', 'https://evil.example/{id}', /is a URL/],
    ['auto_book', 'POST //evil.example/{id}', /is a URL/],
    ['referral_update', '/api/v2/referrals', /must hold \{id\} exactly once/],
    ['sandbox_advance', 'POST /api/v2/{id}/{id}', /must hold \{id\} exactly once/],
    ['sandbox_fixture', '/api/v2/sandbox/{id}/fixtures', /must not hold \{id\}/],
    ['sandbox_test_webhook', 'POST api/v2/x', /must start with \//],
    ['auto_book', 'POST /api/v2/../admin/{id}', /must not hold \. or \.\. segments/],
    ['auto_book', '/api/v2/..;x/admin/{id}', /must not hold \. or \.\. segments/],
    ['referral_update', 'PATCH /api/v2/%2e%2e/outside/{id}', /percent-encoded dot, slash/],
    ['sandbox_fixture', '/api/v2/a%2Fb', /percent-encoded dot, slash/],
    ['sandbox_test_webhook', '/api/v2/test?x=1', /not allowed in a path/],
    [
      'auto_book',
      'FETCH /api/v2/{id}',
      /names the method FETCH, which is not one of GET, POST, PUT, PATCH, DELETE/,
    ],
  ] as const)('path.%s %j is refused, exit 2, nothing stored', async ([op, value, message]) => {
    const r = await piped(['config', 'set', `path.${op}`, value], { env: env() });
    expectUsageError(r, message, 0);
    expect(r.stderr).toContain(`path.${op}: `);
    expect(r.stderr).toContain(`'${OPERATIONS[op].method} ${OPERATIONS[op].path}'`);
    expect(() => readFileSync(join(dir.path, 'config.json'))).toThrow();
  });

  it('a hand-edited path of a new operation is checked on read: named, exit 1', async () => {
    writeFileSync(
      join(dir.path, 'config.json'),
      JSON.stringify({ environments: { local: { paths: { auto_book: 'POST /api/v2/../x/{id}' } } } }),
      { mode: 0o600 },
    );
    const r = await run(['config', 'get', 'path.auto_book', '--env', 'local'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"environments.local.paths.auto_book" must not hold . or .. segments');
    expect(r.stderr).toContain(
      "imaging config set path.auto_book 'POST /api/v2/referrals/{id}/auto_book' --env local",
    );
  });
});

describe('operationRoute and sendOperation, against a real server', () => {
  const ID = '3212c76a-c27e-4ca2-9e90-bb9c865c1630';
  const client = (url: string) =>
    new ApiClient({ baseUrl: url, token: 'tok_test_1234', timeoutMs: 5000, clean });

  it('the configured method and path are where the request goes, with the body given; the token stays below the base URL', async () => {
    const server = await testServer((_req, res) => json(res, 200, { ok: true }));
    try {
      const s = await piped(
        ['config', 'set', 'path.referral_update', 'PUT /api/v2/partner/referrals/{id}/edit'],
        {
          env: env({ IMAGING_ENV: 'local' }),
        },
      );
      expect(s.code, s.stderr).toBe(0);
      const config = new ConfigStore(env());
      const route = operationRoute(config, 'local', 'referral_update', ID);
      expect(route).toMatchObject({ method: 'PUT', path: `/api/v2/partner/referrals/${ID}/edit` });
      // A base URL with a path prefix keeps it: the request goes below <base>/api/v2 only.
      await sendOperation(client(`${server.url}/gw`), route, { referral: { wc_number: 'WC-1' } });
      expect(server.seen.map((q) => [q.method, q.url, q.body, q.headers.authorization])).toEqual([
        [
          'PUT',
          `/gw/api/v2/partner/referrals/${ID}/edit`,
          '{"referral":{"wc_number":"WC-1"}}',
          'Bearer tok_test_1234',
        ],
      ]);
      // An id can never add a segment.
      const odd = operationRoute(config, 'local', 'referral_update', '../../x');
      expect(odd.path).toBe('/api/v2/partner/referrals/..%2F..%2Fx/edit');
      // An operation without an id, on another environment: its default.
      expect(operationRoute(config, 'sandbox', 'sandbox_fixture')).toMatchObject({
        method: 'POST',
        path: '/api/v2/sandbox/fixtures',
        configured: undefined,
      });
    } finally {
      await server.close();
    }
  });

  it('a 404 or 405 from a default path says which key to set; a configured one says what it is set to', async () => {
    const server = await testServer((req, res) =>
      json(res, req.method === 'PATCH' ? 405 : 404, {
        error: 'nope',
        message: 'No route',
        code: 'not_found',
      }),
    );
    try {
      const config = new ConfigStore(env());
      for (const [op, status] of [
        ['referral_update', 405],
        ['auto_book', 404],
      ] as const) {
        const route = operationRoute(config, 'production', op, ID);
        const err = await sendOperation(client(server.url), route, {}).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).status).toBe(status);
        const text = formatError(err);
        expect(text).toContain(
          `hint: The path of ${OPERATIONS[op].name} is not published (the default, ${OPERATIONS[op].method} ${OPERATIONS[op].path}, is a guess); set it with: imaging config set path.${op} '${OPERATIONS[op].method} /api/v2/…/{id}/…' --env production`,
        );
      }
      await piped(['config', 'set', 'path.auto_book', '/api/v2/book/{id}', '--env', 'production'], {
        env: env(),
      });
      const route = operationRoute(new ConfigStore(env()), 'production', 'auto_book', ID);
      const err = await sendOperation(
        client(server.url),
        route,
        {},
        `there is no referral ${ID} on production`,
      ).catch((e: unknown) => e);
      expect(formatError(err)).toContain(
        `hint: Either there is no referral ${ID} on production, or path.auto_book is set to POST /api/v2/book/{id} for production`,
      );
    } finally {
      await server.close();
    }
  });

  it('a stored value made unusable by hand is a usage error before any request', async () => {
    const config = new ConfigStore(env());
    config.lenient = true; // as the config store's own read check is passed by
    (config.read() as { environments?: unknown }).environments = {
      local: { paths: { sandbox_advance: 'POST /api/v2/%2e%2e/{id}' } },
    };
    expect(() => operationRoute(config, 'local', 'sandbox_advance', 'v1')).toThrow(UsageError);
    expect(() => operationRoute(config, 'local', 'sandbox_advance', 'v1')).toThrow(
      /the stored path\.sandbox_advance of local is not usable/,
    );
  });
});
