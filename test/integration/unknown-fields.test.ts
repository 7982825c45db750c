import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, run, tempDir, testServer } from '../helpers.js';

// Issue 9, item 19: `--json` prints the object (or, for lists, each record) with every field the
// API sent, unknown ones included, never an object the tool rebuilt from the fields it knows.
// A server on 127.0.0.1 adds fields this tool has never heard of to every answer.

const ID = '3f1c2b9e-1111-4222-8333-444455556666';
const EXTRA = { added_later: 'x', nested_extra: { a: [1, 2] } };
const uuid = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;

const referral = {
  id: ID,
  reference: 'R-1',
  status: 'pending',
  line_of_business: 'personal_injury',
  payment_type: 'lien',
  incident_state: 'PA',
  visits: [],
  referring_provider: null,
  provider: { id: null, name: null, npi: null },
  law_firm: { id: null, name: null },
  practice: { id: null, name: null },
  icd10_codes: [],
  patient: { id: uuid(1), first_name: 'Ada', last_name: 'L', name: 'Ada L', date_of_birth: '01/02/1990' },
  call_notes: [],
  documents: [],
  answered_medical_questionnaire: false,
  preferred_location: { id: null, name: null },
  scheduling_mode: null,
  auto_book_request: null,
  ...EXTRA,
};
const meta = { current_page: 1, total_pages: 1, total_count: 1, next_page: null };

function answer(method: string, path: string): [number, unknown] | undefined {
  if (method === 'POST' && path === '/api/v2/auth/sso')
    return [
      200,
      { url: 'https://portal.example.test/sso/once', expires_at: '2026-11-22T09:00:00Z', ...EXTRA },
    ];
  if (path === '/api/v2/modalities')
    return [200, { modalities: [{ id: uuid(1), name: 'MRI', slug: 'mri', ...EXTRA }] }];
  if (path === '/api/v2/body_parts')
    return [200, { body_parts: [{ id: uuid(2), name: 'Knee', slug: 'knee', laterality: true, ...EXTRA }] }];
  if (path === '/api/v2/cpt_codes')
    return [
      200,
      {
        cpt_codes: [
          {
            id: uuid(3),
            code: '73721',
            modality_id: uuid(1),
            modality_name: 'MRI',
            body_part_id: uuid(2),
            body_part_name: 'Knee',
            contrast: 'without_contrast',
            laterality: 'left',
            ...EXTRA,
          },
        ],
      },
    ];
  if (path === '/api/v2/icd10_codes')
    return [
      200,
      { icd10_codes: [{ id: uuid(4), code: 'S83.2', short_description: 'Tear', ...EXTRA }], meta },
    ];
  if (method === 'GET' && path === '/api/v2/law_firms')
    return [
      200,
      {
        law_firms: [
          { id: uuid(5), name: 'Firm', address_line_1: 'a', city: 'c', state: 'PA', zipcode: '1', ...EXTRA },
        ],
        meta,
      },
    ];
  if (method === 'POST' && path === '/api/v2/law_firms')
    return [
      201,
      {
        law_firm: {
          id: uuid(6),
          name: 'New',
          address_line_1: null,
          city: 'c',
          state: 'PA',
          zipcode: null,
          ...EXTRA,
        },
      },
    ];
  if (method === 'GET' && path === '/api/v2/referrals') return [200, { referrals: [referral], meta }];
  if (method === 'POST' && path === '/api/v2/referrals') return [201, referral];
  if (path === `/api/v2/referrals/${ID}`) return [200, referral];
  return undefined;
}

let server: Awaited<ReturnType<typeof testServer>>;
let dir: ReturnType<typeof tempDir>;
beforeAll(async () => {
  dir = tempDir();
  server = await testServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const a = answer(req.method ?? 'GET', path);
    if (a) json(res, a[0], a[1]);
    else json(res, 404, { error: `no ${path}` });
  });
});
afterAll(async () => {
  await server.close();
  dir.cleanup();
});

const cli = (args: string[], stdin?: string) =>
  run(['--env', 'production', '--base-url', server.url, '--yes', ...args], {
    env: { IMAGING_TOKEN: 'unknown-fields-token', IMAGING_CONFIG_DIR: dir.path },
    ...(stdin !== undefined ? { stdin } : {}),
  });

/** Every key of `EXTRA` at the top of the printed object (or of each printed record). */
function expectExtras(value: unknown) {
  expect(value).toMatchObject(EXTRA);
}

describe('--json keeps fields the tool does not know', () => {
  it('sso --json prints the server object: url, expires_at and every other field', async () => {
    const r = await cli(['sso', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(printed).toEqual({
      url: 'https://portal.example.test/sso/once',
      expires_at: '2026-11-22T09:00:00Z',
      ...EXTRA,
    });
  });

  it.each([
    ['modalities', ['modalities']],
    ['body-parts', ['body-parts']],
    ['cpt', ['cpt', '73721']],
    ['icd10', ['icd10', 'tear']],
    ['icd10 --all', ['icd10', 'tear', '--all']],
    ['law-firms search', ['law-firms', 'search', 'firm']],
    ['referrals list', ['referrals', 'list']],
    ['referrals list --all', ['referrals', 'list', '--all']],
  ])('%s --json prints each record with every field', async (_name, args) => {
    const r = await cli([...args, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout) as unknown[];
    expect(printed).toHaveLength(1);
    expectExtras(printed[0]);
    const nd = await cli([...args, '--format', 'ndjson']);
    expect(nd.code, nd.stderr).toBe(0);
    expectExtras(JSON.parse(nd.stdout.trim()));
  });

  it.each([
    ['referrals get', ['referrals', 'get', ID]],
    ['referrals create', ['referrals', 'create', '--file', '-']],
    ['law-firms create', ['law-firms', 'create', '--name', 'New', '--city', 'c', '--state', 'PA']],
  ])('%s --json prints the record with every field', async (_name, args) => {
    const r = await cli([...args, '--json'], '{"patient":{"first_name":"A","last_name":"B"}}');
    expect(r.code, r.stderr).toBe(0);
    expectExtras(JSON.parse(r.stdout));
  });
});
