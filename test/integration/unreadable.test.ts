import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run, spawnCli, tempDir, testServer } from '../helpers.js';

/**
 * Answers of the wrong shape, served for real by a server on 127.0.0.1: each human-output command
 * says "the server sent an answer this tool cannot read: <where>" (exit 1) with the request id,
 * and no stack trace; JSON output prints what it can as sent.
 */

const ID = '3f1c2b9e-1111-4222-8333-444455556666';
const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const REQUEST_ID = 'req-shape-7';

let answer = '[]';
let server: Awaited<ReturnType<typeof testServer>>;
beforeAll(async () => {
  server = await testServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': REQUEST_ID });
    res.end(answer);
  });
});
afterAll(() => server.close());
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
  server.seen.length = 0;
});
afterEach(() => dir.cleanup());

const env = () => ({ IMAGING_TOKEN: 'shape-test-token', IMAGING_CONFIG_DIR: dir.path });
const cli = (args: string[]) =>
  run(['--env', 'production', '--base-url', server.url, ...args], { env: env() });
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+:\d+|unexpected failure/);

function expectUnreadable(r: { code: number; stderr: string; stdout: string }, where: string) {
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`error: the server sent an answer this tool cannot read: ${where}\n`);
  expect(r.stderr).toContain(`  request id: ${REQUEST_ID}\n`);
  noStack(r.stderr);
}

const referral = (extra: Record<string, unknown> = {}) => ({
  id: ID,
  reference: 'R-1',
  status: 'pending',
  patient: { first_name: 'Ann', last_name: 'Lee' },
  visits: [
    {
      id: 'v1',
      modality: 'MRI',
      status: 'booked',
      location: { name: 'Center' },
      procedures: [{ body_part: 'Knee', contrast: 'without_contrast', cpt_code: '73721' }],
    },
  ],
  ...extra,
});
const withProcedure = (proc: Record<string, unknown>) =>
  referral({ visits: [{ id: 'v1', status: 'booked', procedures: [{ body_part: 'Knee', ...proc }] }] });

describe('referrals get (the detail view)', () => {
  it.for<[string, unknown, string]>([
    [
      'a non-string contrast',
      withProcedure({ contrast: { with: true } }),
      'the referral, visit 1, procedure 1: contrast is an object, not text',
    ],
    [
      'a numeric contrast',
      withProcedure({ contrast: 2 }),
      'the referral, visit 1, procedure 1: contrast is a number, not text',
    ],
    [
      'visits as an object',
      referral({ visits: { v1: {} } }),
      'the referral: visits is an object, not a list',
    ],
    ['a null visit', referral({ visits: [null] }), 'the referral: visits item 1 is null, not an object'],
    [
      'procedures as text',
      referral({ visits: [{ procedures: 'none' }] }),
      'the referral, visit 1: procedures is text, not a list',
    ],
    [
      'a location list',
      referral({ visits: [{ location: ['x'] }] }),
      'the referral, visit 1: location is a list, not an object',
    ],
    [
      'a null ICD-10 code',
      referral({ icd10_codes: [null] }),
      'the referral: icd10_codes item 1 is null, not an object',
    ],
    [
      'call notes as an object',
      referral({ call_notes: { a: 1 } }),
      'the referral: call_notes is an object, not a list',
    ],
    [
      'a patient name object',
      referral({ patient: { first_name: { x: 1 } } }),
      'the referral, patient: first_name is an object, not text',
    ],
    ['a patient as text', referral({ patient: 'Ann Lee' }), 'the referral: patient is text, not an object'],
    ['a status list', referral({ status: ['a'] }), 'the referral: status is a list, not text'],
    [
      'a visit status number',
      referral({ visits: [{ status: 3 }] }),
      'the referral, visit 1: status is a number, not text',
    ],
    ['a list instead of a referral', [referral()], 'the referral is a list, not an object'],
    ['null', null, 'the referral is null, not an object'],
  ])('%s: exit 1 with where and the request id', async ([, body, where]) => {
    answer = JSON.stringify(body);
    const r = await cli(['referrals', 'get', ID]);
    expectUnreadable(r, where);
    expect(r.stdout).toBe('');
  });

  it('--json prints the same answer as sent', async () => {
    answer = JSON.stringify(referral({ visits: { v1: {} } }));
    const r = await cli(['referrals', 'get', ID, '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${answer}\n`);
  });

  it('a well-formed referral still renders', async () => {
    answer = JSON.stringify(referral());
    const r = await cli(['referrals', 'get', ID]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Referral R-1');
    expect(r.stdout).toContain('Knee, without contrast');
  });
});

describe('JSON nested 200,000 deep', () => {
  it.for<[string, string[]]>([
    ['referrals get', ['referrals', 'get', ID]],
    ['referrals get --json', ['referrals', 'get', ID, '--json']],
    ['referrals list', ['referrals', 'list']],
    ['referrals list --json', ['referrals', 'list', '--json']],
    ['cpt', ['cpt', '73721']],
    ['cpt --format csv', ['cpt', '73721', '--format', 'csv']],
    ['modalities', ['modalities']],
    ['icd10 --all', ['icd10', 'knee', '--all']],
    ['law-firms search', ['law-firms', 'search', 'smith']],
  ])('%s: exit 1, where, request id', async ([, args]) => {
    answer = deep(200_000);
    const r = await cli(args);
    expect(r.stderr).toMatch(
      /cannot read: GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/\S+: JSON nested more than 256 levels deep/,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`request id: ${REQUEST_ID}`);
    noStack(r.stderr);
  });

  it('nested inside a record, in the real binary: no stack overflow reaches the user', async () => {
    answer = `[{"code":"73721","contrast":${deep(200_000)}}]`;
    const r = await spawnCli(['--env', 'production', '--base-url', server.url, 'cpt', '73721'], {
      env: env(),
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /^error: the server sent an answer this tool cannot read: GET .*cpt_codes\?code=73721: JSON nested more than 256 levels deep\n {2}request id: req-shape-7\n/,
    );
    noStack(r.stderr);
  });

  it('a depth the API could plausibly send still works', async () => {
    answer = `[{"code":"73721","contrast":"without_contrast","x":${deep(200)}}]`;
    const r = await cli(['cpt', '73721', '--json']);
    expect(r.code).toBe(0);
  });

  it('imaging api prints such an answer as the bytes that came', async () => {
    answer = deep(200_000);
    const r = await cli(['api', '/anything']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(answer);
  });
});

describe('lists of the wrong shape', () => {
  it.for<[string, string[], unknown, string]>([
    [
      'referrals list: visits as an object',
      ['referrals', 'list'],
      { referrals: [referral({ visits: { a: 1 } })], meta: {} },
      'referral item 1: visits is an object, not a list',
    ],
    [
      'referrals list: contrast object',
      ['referrals', 'list'],
      { referrals: [referral(), withProcedure({ contrast: {} })], meta: {} },
      'referral item 2, visit 1, procedure 1: contrast is an object, not text',
    ],
    [
      'referrals list: a null referral',
      ['referrals', 'list'],
      { referrals: [null], meta: {} },
      'referrals: item 1 is null, not an object',
    ],
    [
      'cpt: contrast object',
      ['cpt', '73721'],
      [{ code: '73721', contrast: { with: 1 } }],
      'CPT mappings: item 1: contrast is an object, not text',
    ],
    ['cpt: a null mapping', ['cpt', '73721'], [null], 'CPT mappings: item 1 is null, not an object'],
    [
      'cpt: no list at all',
      ['cpt', '73721'],
      { mappings: 'none' },
      'the CPT mappings answer is an object, not a list',
    ],
    ['modalities: text', ['modalities'], 'MRI', 'the modalities answer is text, not a list'],
    ['body-parts: a list item', ['body-parts'], [['Knee']], 'body parts: item 1 is a list, not an object'],
    [
      'icd10: description object',
      ['icd10', 'knee'],
      { icd10_codes: [{ code: 'M23', short_description: { en: 'x' } }], meta: {} },
      'ICD-10 codes: item 1: short_description is an object, not text',
    ],
    [
      'law-firms search: name list',
      ['law-firms', 'search', 'smith'],
      { law_firms: [{ name: ['a'] }], meta: {} },
      'law firms: item 1: name is a list, not text',
    ],
    [
      'law-firms create: a list',
      ['law-firms', 'create', '--name', 'N', '--city', 'C', '--state', 'NY'],
      [1],
      'the created law firm is a list, not an object',
    ],
  ])('%s', async ([, args, body, where]) => {
    answer = JSON.stringify(body);
    const r = await cli(args);
    expectUnreadable(r, where);
  });

  it('referrals create: a created referral of the wrong shape', async () => {
    answer = JSON.stringify({ referral: referral({ visits: 'soon' }) });
    const file = join(dir.path, 'r.json');
    await import('node:fs').then((fs) => fs.writeFileSync(file, '{"patient":{}}'));
    const r = await cli(['referrals', 'create', '--file', file, '--yes']);
    expectUnreadable(r, 'the created referral: visits is text, not a list');
  });

  it('JSON output prints the items as sent', async () => {
    answer = JSON.stringify([{ code: '73721', contrast: { with: 1 } }, null]);
    const r = await cli(['cpt', '73721', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ code: '73721', contrast: { with: 1 } }, null]);
  });
});

describe('referrals export', () => {
  it('visits as an object stops the export with where, and leaves no file', async () => {
    answer = JSON.stringify({
      referrals: [referral({ id: '9d0c2b9e-1111-4222-8333-444455556666' }), referral({ visits: { a: 1 } })],
      meta: { total_pages: 1 },
    });
    const out = join(dir.path, 'visits.csv');
    const r = await cli(['referrals', 'export', '--rows', 'visit', '-o', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `error: the server sent an answer this tool cannot read: referral ${ID}: visits is an object, not a list`,
    );
    expect(r.stderr).toContain(`  request id: ${REQUEST_ID}\n`);
    noStack(r.stderr);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir.path).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it('a nested value in a text column is written as its JSON, not [object Object]', async () => {
    answer = JSON.stringify({
      referrals: [withProcedure({ contrast: { with: 1 } })],
      meta: { total_pages: 1 },
    });
    const r = await cli(['referrals', 'export', '--rows', 'procedure', '--format', 'ndjson']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).contrast).toBe('{"with":1}');
  });

  it.for(['csv', 'ndjson', 'json'])(
    'JSON nested 200,000 deep stops a %s export with where, and leaves no file',
    async (format) => {
      answer = `{"referrals":[${deep(200_000)}],"meta":{"total_pages":1}}`;
      const out = join(dir.path, `deep.${format}`);
      const r = await cli(['referrals', 'export', '--format', format, '-o', out]);
      expectUnreadable(r, 'the referral list, page 1: nested more than 256 levels deep');
      expect(existsSync(out)).toBe(false);
    },
  );

  it('a total_count that is not a number is no count: nothing of its text reaches stderr', async () => {
    answer = JSON.stringify({
      referrals: [referral()],
      meta: { total_pages: 1, total_count: '9\nerror: forged count' },
    });
    const r = await cli(['referrals', 'export', '--format', 'ndjson']);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('forged');
    expect(r.stderr.split('\n').filter((l) => l.startsWith('error:'))).toEqual([]);
  });
});
