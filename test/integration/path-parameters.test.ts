import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import '../reliability.js';
import { cli, json, spawnCli, tempDir, testServer } from '../helpers.js';

/**
 * URL parsers leave `..;` alone, but servers that read `;` path parameters (Tomcat, Jetty) drop
 * the parameter and then take the segment as `..`: `/prefix/api/v2/x/..;/..;/outside` reaches
 * `/prefix/outside` there, with the bearer token. path.* (set, and read from a hand-edited file)
 * and every request path (`imaging api` included) refuse such segments; `imaging api` also refuses
 * encoded slashes and backslashes. A real server on 127.0.0.1, behind the base URL
 * http://127.0.0.1:PORT/prefix, records every request that reaches it; the real binary each time.
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
    const r = await spawnCli(['referrals', 'payments', ID], { env: env() });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('"environments.local.paths.payments" must not hold . or .. segments');
    expect(server.seen).toEqual([]);
  });

  it('a ; parameter on an ordinary segment is still allowed, and sent as written', async () => {
    const s = await spawnCli(['config', 'set', 'path.payments', '/api/v2/referrals;v=2/{id}/payments'], {
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
    ['/api/v2/x/..;/..;/outside', /holds a \. or \.\. segment with a ;parameter \(\.\.;\)/],
    ['/referrals/..;x/..;/..;/outside', /holds a \. or \.\. segment with a ;parameter \(\.\.;x\)/],
    ['/api/v2/%2e%2e;/outside', /holds a \. or \.\. segment with a ;parameter \(%2e%2e;\)/],
    ['/api/v2/.;/modalities', /holds a \. or \.\. segment with a ;parameter \(\.;\)/],
    ['/api/v2/a%2F..%2F..%2F..%2Foutside', /holds an encoded slash or backslash \(%2f, %5c\)/],
    ['/api/v2/a%5c..%5c..%5coutside', /holds an encoded slash or backslash \(%2f, %5c\)/],
  ] as const)('%s is exit 2; nothing is sent', async ([path, message]) => {
    // The real binary for the first path, in-process for the others.
    const r = await cli(path === '/api/v2/x/..;/..;/outside', ['api', path], { env: env() });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(server.seen).toEqual([]);
  });

  it('an encoded slash in the query is not a path segment: sent', async () => {
    const r = await spawnCli(['api', '/api/v2/modalities?next=a%2Fb'], { env: env() });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(server.seen.map((q) => q.url)).toEqual(['/prefix/api/v2/modalities?next=a%2Fb']);
  });
});
