import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import '../reliability.js';
import { COMMANDS } from '../../src/registry.js';
import { mockFixture, run, tempDir, testServer } from '../helpers.js';

/**
 * Bad arguments for every command: each is a usage error (exit 2) with one clear message, before
 * any request reaches the emulator. Then huge and binary inputs: a size cap, no crash, no hang.
 */

const fx = mockFixture();

// Made when the file loads: the case table below names these files.
const dir = tempDir();

writeFileSync(join(dir.path, 'secret'), 'x\n');

writeFileSync(join(dir.path, 'body.json'), '{"event_name":"visit.status_changed"}');

beforeAll(() => fx.start());

afterAll(async () => {
  await fx.stop();
  dir.cleanup();
});

beforeEach(() => fx.reset());

const S = () => join(dir.path, 'secret');

const B = () => join(dir.path, 'body.json');

const CASES: Array<[string[], RegExp, string?]> = [
  // global options and the command tree
  [['frobnicate'], /unknown command 'frobnicate'/],
  [['cpd', '73721'], /Did you mean cpt\?/],
  [['--env', 'staging', 'modalities'], /unknown environment "staging"/],
  [['modalities', '--format', 'xml'], /unknown format "xml"/],
  [['modalities', '--timeout', '0'], /--timeout must be between 1ms and 1h\.$/m],
  [
    ['modalities', '--timeout', 'soon'],
    /--timeout must be whole milliseconds \(30000\) or a whole number with a unit/,
  ],
  [
    ['mock', '--latency', '1.5s'],
    /--latency must be whole milliseconds \(30000\) or a whole number with a unit/,
  ],
  [['modalities', '--base-url', 'ftp://x.test'], /only http and https URLs/],
  [['modalities', '--base-url', 'https://user:pw@x.test'], /credentials in the URL are not allowed/],
  [['modalities', '--tokn', 'x'], /unknown option '--tokn'/],
  // auth and config
  [['auth', 'login', '--token', 'abc'], /the API token is never given as a flag/],
  [['auth', 'login'], /standard input is not a terminal/],
  [['auth', 'login', '--with-token'], /the token is empty/, ''],
  [['auth', 'login', '--with-token'], /white space/, 'abc def'],
  [['config', 'set', 'token', 'abc'], /the token is not a config value/],
  [['config', 'set', 'colour', 'red'], /unknown config key "colour"/],
  [['config', 'set', 'env', 'qa'], /unknown environment "qa"/],
  [['config', 'set', 'base-url', 'not a url'], /is not a URL/],
  [['config', 'get'], /missing required argument 'key'/],
  [['auth', 'status', '--chek'], /unknown option '--chek'/],
  [['auth', 'logout', '--all'], /unknown option '--all'/],
  [['auth', 'token', '--show'], /unknown option '--show'/],
  [['auth', 'allowance'], /the allowance meter counts sandbox tokens only \(the environment is local/],
  [['auth', 'allowance', '--env', 'sandbox', '--used', 'lots'], /--used must be a whole number/],
  [['auth', 'allowance', '--env', 'sandbox', '--since', 'last week'], /--since: "last week" is not a date/],
  [['config', 'list', '--all'], /unknown option '--all'/],
  [['config', 'unset', 'token'], /the token is not a config value/],
  [['config', 'path', '--open'], /unknown option '--open'/],
  // the reference-data cache
  [['cache', 'path', '--all'], /unknown option '--all'/],
  [['cache', 'clear', '--force'], /unknown option '--force'/],
  [['modalities', '--no-cache', '--refresh'], /--no-cache and --refresh cannot be used together/],
  // reference data
  [['cpt'], /missing required argument 'code'/],
  [['cpt', '7372'], /"7372" is not a CPT or HCPCS code/],
  [['cpt', '737211'], /is not a CPT or HCPCS code/],
  [['cpt', "73721'; DROP TABLE"], /is not a CPT or HCPCS code/],
  [['icd10', '--page', '0'], /--page must be 1 or more, not 0/],
  [['referrals', 'export', '-o', 'new.csv/'], /-o new.csv\/ ends in "\/", which names a folder/],
  // An empty name is no file or folder (not the current folder, not "cannot read ''").
  [['referrals', 'export', '-o', ''], /--output needs a name, and it is empty/],
  [['referrals', 'download', 'R-240002', '-D', ''], /--dir needs a name, and it is empty/],
  [['referrals', 'download', 'R-240002', '--from', ' '], /--from needs a name, and it is blank/],
  [
    ['icd10', 'knee', '--page', '9007199254740992'],
    /--page is too large: 9007199254740992 \(at most 9,007,199,254,740,991\)/,
  ],
  [['icd10', '--page', '-1'], /--page must be 1 or more, not -1/],
  [['icd10', '--per-page', '1001'], /--per-page must be between 1 and 1000/],
  [['icd10', '--per-page', '2.5'], /--per-page must be a whole number/],
  [['icd10', '--ids', 'a,b'], /not a UUID: a, b/],
  [['icd10', '--ids', ','], /--ids needs at least one id/],
  [['icd10', '--all', '--page', '2'], /--all and --page cannot be used together/],
  [['body-parts', '--modality', ' '], /--modality needs a name or an id/],
  [['law-firms', 'search', '  '], /the search query is empty/],
  [['law-firms', 'search', 'x', '--page', 'two'], /--page must be a whole number/],
  [['law-firms', 'create', '--name', 'X', '--city', 'Y'], /required option '--state <st>' not specified/],
  [
    ['law-firms', 'create', '--name', 'X', '--city', 'Y', '--state', 'N1'],
    /--state must be a two-letter abbreviation/,
  ],
  [['law-firms', 'create', '--name', ' ', '--city', 'Y', '--state', 'NV'], /--name is empty/],
  [
    ['law-firms', 'create', '--name', 'X', '--city', 'Y', '--state', 'NV', '--zipcode', '9'],
    /--zipcode must be 12345/,
  ],
  [['sso', '--format', 'csv'], /--format csv is not available here/],
  // referrals
  [['referrals', 'get', ' '], /the referral id or reference is empty/],
  [['referrals', 'payments', ''], /the referral id or reference is empty/],
  [['referrals', 'notifications', '\t'], /the referral id or reference is empty/],
  [['referrals', 'find', ' '], /the search text is empty/],
  [['referrals', 'find', '02/30/1990'], /"02\/30\/1990" is not a date/],
  [
    ['referrals', 'search', 'Garcia'],
    /unknown command 'search'\nhint: Did you mean imaging referrals find\?/,
  ],
  [
    ['referrals', 'serach', 'Garcia'],
    /unknown command 'serach'\nhint: Did you mean imaging referrals find\?/,
  ],
  [
    ['referrals', 'download', 'R-240002', '-o', 'x.pdf'],
    /unknown option '-o'\nhint: referrals download saves into a folder: -D, --dir DIR/,
  ],
  [['referrals', 'documents', ' '], /the referral id or reference is empty/],
  [['config', 'set', 'path.payments', 'https://evil.example/{id}'], /path.payments: .* is a URL/],
  [['config', 'set', 'path.notifications', '/api/v2/notifications'], /must hold \{id\} exactly once/],
  [['referrals', 'list', '--param', 'oops'], /expected KEY=VALUE/],
  [['referrals', 'list', '--param', 'page=2'], /--param page: use --page/],
  [['referrals', 'list', '--all', '--page', '3'], /--all and --page/],
  [['referrals', 'create'], /--file is required/],
  [['referrals', 'create', '--dry-run'], /--file is required/],
  // the sandbox's own tools
  [['sandbox', 'advance', 'R-1'], /required option '--to <status>'/],
  [
    ['sandbox', 'advance', 'R-1', '--to', 'bookd'],
    /--to: unknown visit status "bookd"; did you mean "booked"\?/,
  ],
  [['sandbox', 'advance', 'R-1', '--to', 'booked,complete'], /--to takes one status, not 2/],
  [['--env', 'production', 'sandbox', 'advance', 'R-1', '--to', 'booked'], /not production/],
  [['--env', 'production', 'sandbox', 'fixture'], /not production/],
  [['sandbox', 'fixture', ' '], /the fixture name is empty/],
  [['sandbox', 'test-webhook', '--event', 'visit'], /unknown event "visit"/],
  [['--env', 'production', 'sandbox', 'test-webhook'], /not production/],
  [['referrals', 'watch'], /name the referrals to watch/],
  [
    ['referrals', 'watch', 'R-240001', '--until', 'boked'],
    /--until: unknown visit status "boked"; did you mean "booked"\?/,
  ],
  [['referrals', 'watch', 'R-240001', '--interval', '60'], /--interval: "60" is not a duration/],
  [
    ['referrals', 'watch', 'R-240001', '--until', 'Canceled'],
    /--until canceled is not a status a referral progresses to/,
  ],
  [
    ['referrals', 'watch', 'R-240001', '--until', 'booked,exam_not_completed'],
    /--until exam_not_completed is not/,
  ],
  [
    ['referrals', 'create', '--file', '/nonexistent/r.json'],
    /cannot read \/nonexistent\/r.json: no such file/,
  ],
  [['referrals', 'create', '--file', '-'], /not valid JSON/, '{"patient":'],
  [['referrals', 'create', '--file', '-'], /must be a JSON object/, '[1,2]'],
  [['referrals', 'create', '--file', '-'], /is empty/, ''],
  [['referrals', 'update', 'R-240001'], /nothing to update/],
  [['referrals', 'update', 'R-240001', '--icd10', 'M54.50'], /has no \+ or - in front/],
  [
    ['referrals', 'auto-book', 'R-240001', '--strategy', 'closest', '--radius', '0'],
    /between 1 and 250, not 0/,
  ],
  [
    ['referrals', 'auto-book', 'R-240001', '--strategy', 'nearest', '--radius', '5'],
    /unknown strategy "nearest"/,
  ],
  [['referrals', 'export', '--rows', 'patients'], /unknown row kind "patients"/],
  [['referrals', 'download'], /name the referrals to download from/],
  // --fields where it is not taken: the --json hint only where --json is taken.
  [
    ['referrals', 'watch', 'R-240001', '--fields', 'reference'],
    /^error: --fields is not available for imaging referrals watch\n$/,
  ],
  [['referrals', 'watch', 'R-240001', '--json'], /--format json is not available here/],
  [
    ['referrals', 'watch', 'R-240001', '--bom'],
    /--bom is for CSV output, and imaging referrals watch writes no CSV/,
  ],
  [
    ['referrals', 'download', 'R-240001', '--fields', 'statuss'],
    /^error: --fields: unknown field "statuss"; did you mean status\?\n/,
  ],
  [['referrals', 'download', 'R-240001', '--no-formula-guard'], /--no-formula-guard is for CSV output/],
  [
    ['referrals', 'download', '3212c76a-c27e-4ca2-9e90-bb9c865c1630', '--max-size', '-1'],
    /--max-size must be a size such as 20MiB/,
  ],
  // A file is held in memory whole: more than one buffer holds is refused, not crashed on.
  [
    ['referrals', 'download', '3212c76a-c27e-4ca2-9e90-bb9c865c1630', '--max-size', '100GiB'],
    /--max-size can be at most 2GiB, not "100GiB"/,
  ],
  [
    ['referrals', 'download', '3212c76a-c27e-4ca2-9e90-bb9c865c1630', '--max-size', '2147483649'],
    /--max-size can be at most 2GiB/,
  ],
  [['referrals', 'export', '--format', 'xls'], /unknown format "xls"/],
  [['referrals', 'export', '--concurrency', '99'], /--concurrency must be between 1 and 16/],
  [['referrals', 'export', '--visit-status', ' , '], /--visit-status needs at least one status/],
  [['referrals', 'export', '-o', '/nonexistent-dir/x.csv'], /no such folder/],
  [['referrals', 'export', '-o', '/tmp'], /cannot write \/tmp: it is a folder/],
  [['referrals', 'export', '--resume'], /--resume needs -o FILE/],
  [['referrals', 'export', '--resume-or-start'], /--resume-or-start needs -o FILE/],
  [['referrals', 'export', '--resumable', '-o', '-'], /--resumable needs -o FILE/],
  [['referrals', 'export', '--resume', '-o', '/dev/null'], /--resume: \/dev\/null is not a regular file/],
  // api
  [['api'], /missing required argument 'method-or-path'/],
  [['api', 'YEET', '/x'], /unknown HTTP method "YEET"/],
  [['api', 'https://evil.example/api/v2/modalities'], /give a path, not a full URL/],
  [['api', '//evil.example/x'], /give a path, not a full URL/],
  [['api', 'GET', '/x', '--input', B()], /--input sends a body, which GET does not take/],
  [['api', 'POST', '/x', '--input', '-'], /not valid JSON/, 'not json'],
  [['api', 'POST', '/x', '-f', 'a[b=1'], /not of the form name/],
  [['api', 'POST', '/x', '--paginate'], /--paginate works with GET only/],
  [['api', '/x', '-f', 'novalue'], /expected KEY=VALUE/],
  // webhooks
  [['webhook', 'verify'], /give the delivery with --request FILE/],
  [['webhook', 'verify', '--request', B(), '--body', B()], /give the delivery with --request FILE/],
  [['webhook', 'verify', '--request', B(), '--header', 'X: y'], /--header goes with --body/],
  [['webhook', 'verify', '--body', B(), '--secret', 'x'], /the webhook secret is never given as a flag/],
  [['webhook', 'verify', '--body', B(), '--secret-file', '/nonexistent/s'], /--secret-file: cannot read/],
  [['webhook', 'verify', '--body', B()], /no webhook signing secret/],
  [['webhook', 'verify', '--body', B(), '--encoding', 'base32'], /unknown encoding "base32"/],
  [['webhook', 'verify', '--body', B(), '--tolerance', '-5'], /--tolerance must be a whole number/],
  [['webhook', 'verify', '--body', B(), '--secret-format', 'pem'], /--secret-format: unknown format "pem"/],
  [['webhook', 'verify', '--body', B(), '--signature-header', 'X Sig'], /is not a header name/],
  [['webhook', 'verify', '--request', '-'], /the secret cannot be asked for there/],
  [['webhook', 'sign', '--body', B(), '--timestamp', '1.5'], /--timestamp must be Unix seconds/],
  [['webhook', 'sign', '--body', B(), '--encoding', 'auto'], /unknown encoding "auto"/],
  [['webhook', 'sign', '--body', B(), '--curl', 'ftp://x'], /--curl needs an http\(s\) URL/],
  [['webhook', 'send', 'visit.status'], /unknown event "visit.status"/],
  [['webhook', 'send', 'visit.status_changed', '--print', '--duplicate'], /pick one/],
  [['webhook', 'sample', 'visit.status'], /unknown event "visit.status"/],
  [['cpt', 'knee mri'], /the API looks up exact CPT codes only/],
  [
    ['webhook', 'send', 'visit.status_changed', '--to', 'http://127.0.0.1:9/', '--secret', 'x'],
    /the webhook secret is never given as a flag/,
  ],
  [['webhook', 'listen', '--port', '70000'], /must be a port from 0 to 65535/],
  [['webhook', 'listen', '--path', 'hooks'], /--path must start with \//],
  [['webhook', 'listen', '--forward-to', 'localhost:3000'], /--forward-to needs an http\(s\) URL/],
  // completion
  [['completion', 'tcsh'], /no completion for "tcsh"/],
  // the emulator
  [['mock', '--port', 'http'], /must be a port/],
  [['mock', '--fault', 'meltdown'], /--fault: fault "meltdown"/],
  [['mock', '--list-shape', 'xml'], /Allowed choices are object, bare/],
  [['mock', '--advance-every', '0s'], /--advance-every must be 1s or more/],
  [['mock', '--advance-every', '5'], /--advance-every: "5" is not a duration/],
  [['mock', '--webhook-url', 'not-a-url'], /--webhook-url needs an http\(s\) URL/],
];

describe('bad arguments: exit 2, one clear message, nothing sent', () => {
  it('every command in the registry has a row (a command left out fails here)', () => {
    // Commands with no argument or option a user can get wrong: their row is an unknown option.
    const covered = (path: readonly string[]) =>
      CASES.some(([argv]) => path.every((word, i) => argv[i] === word));
    const missing = COMMANDS.map((c) => c.path.join(' ')).filter((_p, i) => !covered(COMMANDS[i]!.path));
    expect(missing).toEqual([]);
  });

  it.for(CASES)('%j', async ([argv, message, stdin], { task }) => {
    const secretless =
      argv.includes('--secret-file') ||
      (argv[0] === 'webhook' && argv.includes('--body') && !/secret|signing/.test(String(message)));
    const args = secretless && !argv.includes('--secret-file') ? [...argv, '--secret-file', S()] : argv;
    const r = await run(args, { env: fx.env(), ...(stdin !== undefined ? { stdin } : {}) });
    task.meta.badInputs = 1;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/^error: /m);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('an argument over 4 KiB, to every command that takes one: exit 2, never repeated, nothing sent', async () => {
    const long = 'R'.repeat(4097);
    const defs = await Promise.all(
      COMMANDS.map(async (c) => ({ path: c.path, def: (await c.load()).default })),
    );
    // (A command with a required option refuses its absence first: exit 2 all the same.)
    const taking = defs.filter(
      ({ def }) =>
        (def.args ?? []).length > 0 &&
        !Object.values((def.options ?? {}) as Record<string, { required?: boolean }>).some((o) => o.required),
    );
    expect(taking.length).toBeGreaterThan(10);
    for (const { path, def } of taking) {
      const r = await run([...path, ...(def.args ?? []).map(() => long)], { env: fx.env() });
      expect(r.code, `${path.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/^error: the .+ given is longer than 4 KiB\nhint: Nothing was sent\.\n$/);
      expect(fx.apiRequests()).toHaveLength(0);
    }
  });
});

describe('hints for common mistakes', () => {
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

  it.for([['--secret', 's3cr3t-value'], ['--secret=s3cr3t-value']])(
    'webhook verify %s: the secret is never a flag, and is not echoed',
    async (flags) => {
      const r = await run(['webhook', 'verify', '--body', '-', ...flags], { env: fx.env(), stdin: '{}' });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('the webhook secret is never given as a flag');
      expect(r.stderr).toContain('--secret-file');
      expect(r.stderr).toContain('IMAGING_WEBHOOK_SECRET');
      expect(r.stderr).not.toContain('s3cr3t');
    },
  );

  it.for<[string[], string]>([
    [['mock', '--webhook-secret', 'abc'], '--webhook-secret-file FILE'],
    [['mock', '--port', '0', '--secret=abc'], '--webhook-secret-file FILE'],
    [['webhook', 'sign', '--webhook-secret', 'abc'], '--secret-file FILE'],
    [['--verbose', 'webhook', 'listen', '--secret', 'abc'], '--secret-file FILE'],
  ])('%j: the hint names the flag that command takes, and help lists it', async ([argv, flag]) => {
    const r = await run(argv, { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the webhook secret is never given as a flag');
    expect(r.stderr).toContain(`hint: Use ${flag}, or set IMAGING_WEBHOOK_SECRET`);
    expect(r.stderr).not.toContain('abc');
    const command = argv.filter((a) => /^[a-z]+$/.test(a)).slice(0, argv[0] === 'mock' ? 1 : 2);
    const help = await run([...command, '--help'], { env: fx.env() });
    expect(help.stdout).toContain(flag.replace(' FILE', ' <file>'));
  });

  it('a command that takes no secret: the hint says which commands do', async () => {
    const r = await run(['referrals', 'list', '--webhook-secret', 'abc'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'hint: Only the webhook commands (--secret-file FILE) and imaging mock (--webhook-secret-file FILE) take a secret',
    );
    expect(r.stderr).not.toContain('abc');
  });

  it('--base-url localhost:4010 suggests http://localhost:4010', async () => {
    const r = await run(['modalities', '--base-url', 'localhost:4010'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('hint: Did you mean http://localhost:4010?');
    const remote = await run(['modalities', '--base-url', 'api.example.com'], { env: fx.env() });
    expect(remote.stderr).toContain('hint: Did you mean https://api.example.com?');
    expect(fx.apiRequests()).toHaveLength(0);
  });

  it('--page 0 must be 1 or more', async () => {
    const r = await run(['icd10', 'knee', '--page', '0'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--page must be 1 or more, not 0.');
    expect(r.stderr).not.toContain('9007199254740991');
  });

  it('connection refused with --env local suggests imaging mock', async () => {
    const s = await testServer(() => {});
    await s.close(); // a port that was just ours and now refuses
    const r = await run(['modalities', '--env', 'local', '--base-url', s.url], {
      env: { IMAGING_CONFIG_DIR: dir.path },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error: connection refused by ${s.url}`);
    expect(r.stderr).toContain(
      `hint: Nothing is listening there. For the local emulator, start it first: imaging mock --port ${s.port}`,
    );
  });
});

describe('a verb without its group', () => {
  const fx = mockFixture({ referrals: 60 });

  beforeAll(() => fx.start());

  afterAll(() => fx.stop());

  let dir: ReturnType<typeof tempDir>;

  beforeEach(() => {
    fx.reset();
    fx.mock.faults.clear();
    dir = tempDir();
    return () => dir.cleanup();
  });

  const verbs = [...new Set(COMMANDS.filter((c) => c.path.length === 2).map((c) => c.path[1]!))].filter(
    (v) => !COMMANDS.some((c) => c.path[0] === v),
  );
  it.for(verbs)('imaging %s: exit 2, naming every command it is the verb of', async (verb) => {
    const r = await run(['--env', 'local', verb, 'x'], { env: fx.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`unknown command '${verb}'`);
    for (const c of COMMANDS.filter((c) => c.path[1] === verb))
      expect(r.stderr).toContain(`imaging ${c.path.join(' ')}`);
    expect(fx.apiRequests()).toHaveLength(0);
  });
  it("imaging notifications suggests imaging referrals notifications; a typo of a group still gets commander's", async () => {
    const r = await run(['notifications'], { env: fx.env() });
    expect(r.stderr).toContain('Did you mean imaging referrals notifications?');
    const typo = await run(['referals'], { env: fx.env() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Did you mean referrals?');
  });
});
