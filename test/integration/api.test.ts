import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { nest } from '../../src/commands/api.js';
import { json, mockFixture, run, tempDir, testServer } from '../helpers.js';

const fx = mockFixture({ referrals: 60 });
beforeAll(() => fx.start());
afterAll(() => fx.stop());
beforeEach(() => fx.reset());

describe('imaging api', () => {
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

describe('nest', () => {
  it('builds nested objects and arrays from Rails-style keys', () => {
    expect(
      nest([
        ['a[b][c]', 1],
        ['tags[]', 'x'],
        ['tags[]', 'y'],
        ['top', true],
      ]),
    ).toEqual({
      a: { b: { c: 1 } },
      tags: ['x', 'y'],
      top: true,
    });
  });
  it('rejects malformed keys', () => {
    expect(() => nest([['a[b', 1]])).toThrow(/not of the form/);
  });
});
