import { existsSync, readdirSync, writeFileSync } from 'node:fs';
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
      'law-firms search: a second address line object',
      ['law-firms', 'search', 'smith'],
      { law_firms: [{ name: 'Smith', address_line_2: { suite: 1 } }], meta: {} },
      'law firms: item 1: address_line_2 is an object, not text',
    ],
    [
      'body-parts: laterality list',
      ['body-parts'],
      [{ name: 'Knee', laterality: [true] }],
      'body parts: item 1: laterality is a list, not text',
    ],
    [
      'referrals payments: date object',
      ['referrals', 'payments', ID],
      [{ id: 'p1', amount: 1, date: { on: 1 }, procedures: [] }],
      'payments: item 1: date is an object, not text',
    ],
    [
      'referrals notifications: visit id list',
      ['referrals', 'notifications', ID],
      [{ id: 'n1', channel: 'sms', status: 'sent', visit_id: ['v1'] }],
      'notifications: item 1: visit_id is a list, not text',
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

  it('no list at all: --json fails too, so the hint names imaging api with the path (quoted when it must be)', async () => {
    answer = JSON.stringify({ mappings: 'none' });
    for (const extra of [[], ['--json']]) {
      const r = await cli(['cpt', '73721', ...extra]);
      expect(r.code).toBe(1);
      expect(r.stderr).not.toContain('--json shows');
      expect(r.stderr).toContain("See the answer as sent with: imaging api '/api/v2/cpt_codes?code=73721'");
    }
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

describe('error answers with strange `errors` keep their exit code (issue 8 item 10, D1)', () => {
  let status = 400;
  let errorBody = '';
  let errServer: Awaited<ReturnType<typeof testServer>>;
  beforeAll(async () => {
    errServer = await testServer((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req-err-9' });
      res.end(errorBody);
    });
  });
  afterAll(() => errServer.close());
  const errCli = (args: string[]) =>
    run(['--env', 'production', '--base-url', errServer.url, ...args], { env: env() });

  it.for<[number, number]>([
    [400, 7],
    [401, 3],
    [404, 4],
    [422, 7],
    [429, 6],
    [500, 1],
  ])('errors nested 200,000 deep on HTTP %i: exit %i with the request id', async ([s, code]) => {
    status = s;
    errorBody = `{"error":"bad","errors":[${deep(200_000)}]}`;
    for (const args of [['modalities'], ['api', '/modalities']]) {
      const r = await errCli(args);
      expect(r.code).toBe(code);
      expect(r.stderr).toContain('error: bad\n');
      expect(r.stderr).toContain('  request id: req-err-9\n');
      expect(r.stderr).toContain('    - [[[[[[[[[…]]]]]]]]]\n');
      noStack(r.stderr);
    }
  });

  it('field errors nested deep, or objects: compact JSON, never [object Object]', async () => {
    status = 422;
    errorBody = JSON.stringify({ error: 'bad', errors: { name: [{ a: 1 }], city: 'blank' } }).replace(
      '{"a":1}',
      `{"a":1}],"zip":[${deep(200_000)}`,
    );
    const r = await errCli(['modalities']);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('    - name {"a":1}\n');
    expect(r.stderr).toContain('    - zip [[[[[[[[[…]]]]]]]]]\n');
    expect(r.stderr).toContain('    - city blank\n');
    expect(r.stderr).not.toContain('[object Object]');
    noStack(r.stderr);
  });

  it('a long item is cut, and many items are cut to 20 with a note', async () => {
    status = 400;
    errorBody = JSON.stringify({
      error: 'bad',
      errors: Array.from({ length: 50 }, (_, i) => ({ n: i, t: 'y'.repeat(1000) })),
    });
    const r = await errCli(['modalities']);
    expect(r.code).toBe(7);
    const items = r.stderr.split('\n').filter((l) => l.startsWith('    - '));
    expect(items).toHaveLength(21);
    expect(items[20]).toBe('    - (further errors left out)');
    expect(items[0]?.length).toBeLessThan(320);
    expect(items[0]).toMatch(/^ {4}- \{"n":0,"t":"y+…$/);
  });
});

describe('a list answer with no list in it (D2)', () => {
  it.for<[string, unknown, string]>([
    ['null', null, 'the list is null, not a list or an object'],
    [
      'an empty object',
      {},
      'the list is an object with no list of records in it (expected icd10_codes: [...])',
    ],
    ['text', 'x', 'the list is text, not a list or an object'],
    ['a number', 42, 'the list is a number, not a list or an object'],
    ['the member as text', { icd10_codes: 'x' }, 'the list: icd10_codes is text, not a list'],
    [
      'two lists',
      { a: [1], b: [2] },
      'the list: 2 members are lists, none of them "icd10_codes"; cannot tell which holds the records',
    ],
  ])('icd10 answered with %s', async ([, body, where]) => {
    answer = JSON.stringify(body);
    expectUnreadable(await cli(['icd10', 'knee']), where);
  });

  it.for<[string, string[], unknown, string]>([
    [
      'law-firms search',
      ['law-firms', 'search', 'x'],
      { a: 1 },
      'the list is an object with no list of records in it (expected law_firms: [...])',
    ],
    [
      'referrals list',
      ['referrals', 'list'],
      { referrals: { a: 1 } },
      'the list: referrals is an object, not a list',
    ],
    [
      'api --paginate',
      ['api', '/icd10_codes', '--paginate'],
      { a: [1], b: [2] },
      'the list: 2 members are lists; cannot tell which holds the records',
    ],
  ])('%s', async ([, args, body, where]) => {
    answer = JSON.stringify(body);
    expectUnreadable(await cli(args), where);
  });

  it('referrals export: exit 1, where and the request id, no file left', async () => {
    answer = JSON.stringify({ referrals: { a: 1 } });
    const out = join(dir.path, 'out.csv');
    const r = await cli(['referrals', 'export', '-o', out]);
    expectUnreadable(r, 'the list: referrals is an object, not a list');
    expect(existsSync(out)).toBe(false);
  });
});

describe('created records and page hints are checked (D3)', () => {
  const create = ['law-firms', 'create', '--name', 'N', '--city', 'C', '--state', 'NY'];
  it.for<[unknown, string]>([
    [{ law_firm: { name: { a: 1 } } }, 'the created law firm: name is an object, not text'],
    [{ name: [1, 2], address_line_1: { x: 1 } }, 'the created law firm: name is a list, not text'],
    [{ law_firm: 'x' }, 'the created law firm is text, not an object'],
  ])('law-firms create answered %j', async ([body, where]) => {
    answer = JSON.stringify(body);
    const r = await cli(create);
    expectUnreadable(r, where);
    expect(r.stdout).toBe('');
  });

  it.for<[unknown, string]>([
    [null, 'null'],
    ['s', 'text'],
    [42, 'a number'],
  ])('referrals create answered %j', async ([body, kind]) => {
    answer = JSON.stringify(body);
    const file = join(dir.path, 'r.json');
    writeFileSync(file, '{"patient":{}}');
    const r = await cli(['referrals', 'create', '--file', file, '--yes']);
    expectUnreadable(r, `the created referral is ${kind}, not an object`);
    expect(r.stderr).not.toContain('Created referral');
  });

  it('icd10: a page hint from meta shows numbers only', async () => {
    answer = JSON.stringify({ icd10_codes: [{ code: 'M23' }], meta: { current_page: {}, total_pages: 3 } });
    const bad = await cli(['icd10', 'knee']);
    expect(bad.code).toBe(0);
    expect(bad.stderr).not.toContain('Page');
    expect(bad.stderr).not.toContain('[object Object]');
    answer = JSON.stringify({
      icd10_codes: [{ code: 'M23' }],
      meta: { current_page: 1, total_pages: 3, next_page: 2 },
    });
    const good = await cli(['icd10', 'knee']);
    expect(good.stderr).toContain('Page 1 of 3. Next: --page 2, or --all.');
  });
});
