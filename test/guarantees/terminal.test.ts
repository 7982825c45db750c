import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseFault } from '../../src/emulator/faults.js';
import { ExitCode } from '../../src/errors.js';
import { cells, fitExample } from '../../src/help/format.js';
import { COMMANDS as COMMAND_DEFS, GROUPS } from '../../src/registry.js';
import { mockFixture, run, tempDir } from '../helpers.js';
import { CLI, openPane, type Pane, paneFixture } from '../terminal.js';

/**
 * At a real terminal: tables and the export's progress line in a tmux pane of
 * 80 and 200 columns, read back as a person sees them, and the same commands piped.
 */

const fx = mockFixture();
beforeAll(() => fx.start());
afterAll(() => fx.stop());
let panes: Pane[] = [];
afterEach(async () => {
  await Promise.all(panes.map((p) => p.close()));
  panes = [];
});

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
const cmd = (args: string[]) => `${CLI} ${args.map(quote).join(' ')}`;
async function inPane(
  cols: number,
  command: string,
  mock = fx,
  finished?: (fn: () => Promise<void>) => void,
): Promise<Pane> {
  const pane = await openPane({ cols, command, env: mock.env() });
  if (finished) finished(() => pane.close());
  else panes.push(pane);
  return pane;
}
/**
 * The screen once the command has ended, and its exit status (the pane is closed here). The emulator
 * is only read: a command at a width is run in a pane once, and the tests that read it share it.
 */
const screens = new Map<string, Promise<{ status: number; lines: string[] }>>();
function screenOf(cols: number, args: string[], pipe = '') {
  const key = JSON.stringify([cols, args, pipe]);
  let screen = screens.get(key);
  if (!screen) {
    screen = (async () => {
      const pane = await openPane({ cols, command: `${cmd(args)}${pipe}`, env: fx.env() });
      try {
        const status = await pane.exited();
        return { status, lines: await pane.screen() };
      } finally {
        await pane.close();
      }
    })();
    screens.set(key, screen);
  }
  return screen;
}
/**
 * The same command in-process, told it writes to a terminal of `cols` columns (what the binary reads
 * from its terminal): stdout then stderr, as lines, as the pane shows them. The tests marked "at a
 * real terminal" show the binary's screen is exactly this, so the other commands are checked here
 * without a process and a pane each.
 */
async function asAtTerminal(cols: number, args: string[]) {
  const r = await run(args, {
    env: { ...fx.env(), NO_COLOR: '1' },
    stdoutIsTTY: true,
    stderrIsTTY: true,
    columns: cols,
  });
  const lines = `${r.stdout}${r.stderr}`.split('\n').map((l) => l.trimEnd());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return { status: r.code, lines, stdout: r.stdout, stderr: r.stderr };
}
const json = async (args: string[]) => JSON.parse((await run([...args, '--json'], { env: fx.env() })).stdout);
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;
/** Any piece of an id left on screen: a UUID start not followed by the whole of one. */
const cutId = /\b[0-9a-f]{8}-(?![0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b)/;

/** A referral of the emulator's fixed data (the README's examples use it). */
const REFERRAL = '3212c76a-c27e-4ca2-9e90-bb9c865c1630';

const COMMANDS: Array<[string, string[]]> = [
  ['icd10 S83.2 --per-page 6', ['icd10', 'S83.2', '--per-page', '6']],
  ['referrals list', ['referrals', 'list']],
  ['law-firms search a', ['law-firms', 'search', 'a']],
  ['cpt 73721', ['cpt', '73721']],
  ['modalities', ['modalities']],
  ['body-parts', ['body-parts']],
  ['icd10 knee', ['icd10', 'knee']],
  ['referrals payments', ['referrals', 'payments', REFERRAL]],
  ['referrals notifications', ['referrals', 'notifications', REFERRAL]],
];

// Each test with an emulator and panes of its own, beside the others; first, the longest (a page's
// retries waited out).
describe.concurrent('copy-and-paste and the Left out note at 80 columns', () => {
  /** An emulator of 60 referrals and the panes of one block. */
  function ownFixtures() {
    const fx = mockFixture({ referrals: 60 });
    beforeAll(() => fx.start());
    afterAll(() => fx.stop());
    return { fx, term: paneFixture() };
  }

  /** The words a shell reads from `text`, `imaging` standing for a function that prints its arguments. */
  function shellRead(text: string): string[] {
    execFileSync('sh', ['-n', '-c', text]); // parses
    return execFileSync('bash', ['-c', `imaging() { printf '%s\\n' imaging "$@" END; }\n${text}`], {
      encoding: 'utf8',
    })
      .trimEnd()
      .split('\n');
  }

  describe.concurrent('a command to copy, at an 80-column terminal', () => {
    const { fx, term } = ownFixtures();
    it('"To continue: imaging …" is continued with ` \\`: the pane\'s lines paste as ONE command, same words', async () => {
      fx.mock.faults.add(parseFault('500:*@2', '/api/v2/referrals')); // pages 1-2 answered, page 3 fails
      const args = [
        '--base-url',
        fx.mock.url,
        'referrals',
        'export',
        '--rows',
        'visit',
        '-o',
        'big2.csv',
        '--resumable',
        '--per-page',
        '10',
        '--concurrency',
        '1',
      ];
      const pane = await term.run(
        args,
        fx.env({ IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-polish', IMAGING_BASE_URL: undefined }),
      );
      expect(await pane.exited()).toBe(1);
      const lines = await pane.screen();
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
      const start = lines.findIndex((l) => l.startsWith('To continue: '));
      expect(start).toBeGreaterThanOrEqual(0);
      const end = lines.findIndex((l, i) => i >= start && !l.endsWith(' \\'));
      expect(end).toBeGreaterThan(start); // it did not fit one line: broken, with continuations
      const pasted = lines
        .slice(start, end + 1)
        .join('\n')
        .slice('To continue: '.length);
      expect(shellRead(pasted)).toEqual(['imaging', ...args, '--resume', 'END']);
    });
  });

  describe.concurrent('the "Left out" note names as many columns as fit', () => {
    const { fx, term } = ownFixtures();

    it('referrals list at 56 columns: "Left out: Line of business and 2 more", one line', async () => {
      const pane = await openPane({ cols: 56, command: `${CLI} referrals list`, env: fx.env() });
      term.track(pane);
      expect(await pane.exited()).toBe(0);
      const notes = (await pane.screen()).filter((l) => l.startsWith('Left out'));
      expect(notes).toEqual(['Left out: Line of business and 2 more (--wide shows all)']);
    });
  });
});

// The blocks whose tests each read one finished command's screen (a pane of their own, the emulator
// only read) run their tests concurrently: most of their time is waiting on a process.
describe.concurrent.each([80, 200])('tables at a %i-column terminal', (cols) => {
  it.for(COMMANDS)('%s: fits, ids whole, nothing cut, what is left out named once', async ([, args]) => {
    const { status, lines } = await asAtTerminal(cols, args);
    expect(status).toBe(0);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(cols);
    const screen = lines.join('\n');
    expect(screen).not.toContain('…');
    expect(screen).not.toMatch(cutId);
    const notes = lines.filter((l) => l.startsWith('Left out'));
    expect(notes.length).toBeLessThanOrEqual(1);
    if (cols === 200) expect(notes).toEqual([]);
    if (notes[0]) expect(notes[0]).toMatch(/^Left out: [^()]+ \(--wide shows (?:every column|all)\)$/);
    // Each record's id is on screen whole, unless the ID column was the one left out.
    const records = (await json(args)) as Array<{ id: string }>;
    if (!notes[0]?.match(/[:,] ID[, ]/)) for (const r of records) expect(screen).toContain(r.id);
  });

  // The binary at a real terminal (a tmux pane): it reads the width from the terminal, and the screen
  // is what the in-process run above gives for that width, line for line.
  it.for(cols === 80 ? [COMMANDS[0]!, COMMANDS[1]!, COMMANDS[3]!] : [COMMANDS[1]!, COMMANDS[6]!])(
    '%s at a real terminal: the screen is what the checks above read',
    async ([, args]) => {
      const real = await screenOf(cols, args);
      expect(real.status).toBe(0);
      expect(real.lines).toEqual((await asAtTerminal(cols, args)).lines);
    },
  );
});

describe.concurrent('tables: what 80 columns shows', () => {
  it('icd10 S83.2: every description whole, wrapped under its column, right/left and encounter told apart', async () => {
    const { lines } = await screenOf(80, ['icd10', 'S83.2', '--per-page', '6']);
    const codes = (await json(['icd10', 'S83.2', '--per-page', '6'])) as Array<{
      id: string;
      code: string;
      short_description: string;
    }>;
    const start = lines[1]!.indexOf(codes[0]!.short_description.slice(0, 4));
    for (const c of codes) {
      const at = lines.findIndex((l) => l.startsWith(`${c.code} `));
      expect(lines[at]).toContain(c.id);
      const text: string[] = [lines[at]!.slice(start).replace(c.id, '').trim()];
      for (let i = at + 1; i < lines.length && lines[i]!.startsWith(' '.repeat(start)); i++)
        text.push(lines[i]!.trim());
      expect(text.join(' ')).toBe(c.short_description);
    }
  });

  it('referrals list: reference, patient, status and the visit status kept; the id left out first', async () => {
    // The screens the "at a real terminal" tests read too.
    const { lines } = await screenOf(80, ['referrals', 'list']);
    expect(lines[0]).toMatch(/^REFERENCE +STATUS +PATIENT +VISITS +MOST ADVANCED VISIT$/);
    expect(lines.join('\n').match(UUID)).toBeNull();
    expect(lines).toContainEqual(
      expect.stringMatching(/^R-240001 +closed +Hernández, Emma +2 +contacted_for_booking$/),
    );
    expect(lines).toContain('Left out: Line of business, ID (--wide shows all)');
    const wide = await screenOf(200, ['referrals', 'list']);
    expect(wide.lines[0]).toMatch(
      /^REFERENCE +STATUS +LINE OF BUSINESS +PATIENT +VISITS +MOST ADVANCED VISIT +ID$/,
    );
    // Every row's id, whole.
    const rows = wide.lines.filter((l) => /^R-\d+ /.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(5);
    expect(wide.lines.join('\n').match(UUID)).toHaveLength(rows.length);
  });

  it('cpt 73721: the contrast whole (was "without_c…"), the id named as left out', async () => {
    const { lines } = await screenOf(80, ['cpt', '73721']);
    expect(lines.filter((l) => / without_contrast /.test(l))).toHaveLength(6);
    expect(lines.at(-1)).toBe('Left out: ID (--wide shows all)');
  });
});

describe.concurrent('messages at an 80-column terminal are wrapped between words', () => {
  // Each: a note, a hint, a warning or an error block longer than 80 columns. The terminal used to
  // break them mid-word ("to send them as a quer" / "y instead"); the screen (wrapped lines joined
  // by tmux) now has no line wider than the pane, and every word of the piped text is whole on it.
  const MESSAGES: Array<[string, string[]]> = [
    ['api POST note and the 422 error block', ['api', '/referrals', '-F', 'per_page=5']],
    [
      'the empty-export warning',
      ['referrals', 'export', '--visit-status', '+nothing_here', '-o', '/dev/null'],
    ],
    ['an unknown field hint', ['referrals', 'list', '--fields', 'nope']],
    ['referrals get (the detail view)', ['referrals', 'get', REFERRAL]],
  ];
  it.for(MESSAGES)('%s', async ([, args]) => {
    const { lines } = await screenOf(80, args);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    const piped = await run(args, { env: fx.env() });
    const words = new Set(lines.join(' ').split(/\s+/));
    // Request ids and timings differ between runs.
    const said = `${piped.stdout}\n${piped.stderr}`
      .split(/\s+/)
      .filter((w) => w && w.length <= 70 && !/^req_|^[\d.]+$/.test(w));
    expect(said.length).toBeGreaterThan(10);
    for (const w of said) expect(words.has(w), `"${w}" is not whole on the screen`).toBe(true);
  });
});

describe.concurrent('tables piped, and --wide', () => {
  // The first command through the binary (piped in a pane, and --wide at the pane's 80 columns),
  // the others in-process, not a terminal and as at one.
  it.for(COMMANDS.map(([name, args], i) => [name, args, i === 1] as const))(
    '%s: piped, every column, nothing cut, as before; --wide at 80 shows the same',
    async ([, args, real]) => {
      const inProcess = await run(args, { env: fx.env() }); // not a terminal
      const table = inProcess.stdout.trimEnd().split('\n');
      const piped = real ? (await screenOf(80, args, ' 2>/dev/null | cat')).lines : table;
      expect(piped.slice(0, table.length)).toEqual(table);
      expect(piped.join('\n')).not.toContain('Left out');
      const wide = real
        ? await screenOf(80, [...args, '--wide'])
        : await asAtTerminal(80, [...args, '--wide']);
      expect(wide.lines.slice(0, table.length)).toEqual(table);
      expect(wide.lines.join('\n')).not.toContain('Left out');
    },
  );
});

// Concurrently: each test has its own slow emulator and its own pane, closed when it ends.
describe.concurrent('the export progress line at a terminal', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeAll(() => {
    dir = tempDir();
  });
  afterAll(() => dir.cleanup());
  const exportArgs = (name: string) => [
    'referrals',
    'export',
    '-o',
    `${dir.path}/${name}`,
    '--per-page',
    '20',
  ];
  type Finished = (fn: () => Promise<void>) => void;
  /** An emulator of its own for one test (its request log and faults are that test's alone). */
  async function ownSlow(finished: Finished) {
    const own = mockFixture({ referrals: 3000, latencyMs: 50 });
    await own.start();
    finished(() => own.stop());
    return own;
  }
  const progressLine = (lines: string[]) => lines.find((l) => / pages? /.test(l) && /\/s\b/.test(l));
  const showsProgressWithEta = (lines: string[]) => /ETA \d/.test(progressLine(lines) ?? '');

  /** Nothing of the bar is left on screen (the "^C" a terminal echoes included), the cursor is back. */
  const expectClean = async (pane: Pane, lines: string[]) => {
    expect(lines.filter((l) => /\d+\/\d+ pages|records {2}|\^C|Exporting referrals/.test(l))).toEqual([]);
    expect(await pane.cursorVisible()).toBe(true);
  };

  // One run: the line as it goes, then what Ctrl-C leaves.
  it('at 80 columns: fits with room for "^C", and keeps the rate and the ETA; Ctrl-C clears it, not left stale', async ({
    onTestFinished,
  }) => {
    const slow = await ownSlow(onTestFinished);
    const pane = await inPane(80, cmd([...exportArgs('a.csv'), '--concurrency', '1']), slow, onTestFinished);
    const line = progressLine(await pane.waitForScreen(showsProgressWithEta))!;
    expect(line.length).toBeLessThanOrEqual(77);
    expect(line).toMatch(/\d+\/150 pages {2}[\d,]+ records {2}[\d,]+\/s {2}ETA \d+(m\d\ds|s)$/);
    await pane.keys('C-c');
    expect(await pane.exited()).toBe(130);
    const lines = await pane.screen();
    expect(lines).toContain('interrupted');
    await expectClean(pane, lines);
  });

  it('at 200 columns: the whole line, label and a 20-cell bar', async ({ onTestFinished }) => {
    const slow = await ownSlow(onTestFinished);
    const pane = await inPane(200, cmd([...exportArgs('b.csv'), '--concurrency', '1']), slow, onTestFinished);
    const line = progressLine(await pane.waitForScreen(showsProgressWithEta))!;
    expect(line).toMatch(
      /^Exporting referrals \[[#-]{20}\] \d+\/150 pages {2}[\d,]+ records {2}[\d,]+\/s {2}ETA /,
    );
    await pane.keys('C-c');
    expect(await pane.exited()).toBe(130);
  });

  it('at 10 columns: no progress line at all, and nothing left after Ctrl-C', async ({ onTestFinished }) => {
    const slow = await ownSlow(onTestFinished);
    const pane = await inPane(
      10,
      cmd([...exportArgs('narrow.csv'), '--concurrency', '1']),
      slow,
      onTestFinished,
    );
    // Well into the export (pages 1 and 2 answered, the third asked for): no line is drawn.
    const pagesAsked = () => slow.apiRequests().filter((r) => r.path.startsWith('/api/v2/referrals?')).length;
    while (pagesAsked() < 3) await new Promise((r) => setTimeout(r, 20));
    expect((await pane.screen()).filter((l) => /\/s|ETA|pages|records/.test(l))).toEqual([]);
    await pane.keys('C-c');
    expect(await pane.exited()).toBe(130);
    const lines = await pane.screen();
    expect(lines).toContain('interrupted');
    // The terminal's own echo of Ctrl-C stays, on a line of its own, as for any program; nothing of a
    // progress line does, and the cursor is shown.
    // (Local checkpoints are off: the note after "interrupted" says --resumable would have kept them.)
    const note = '(Started with --resumable, its complete pages would have been kept for --resume.)';
    expect(lines.at(-1)).toBe(note);
    const rest = lines.slice(0, -1);
    expect(rest.filter((l) => l !== '^C' && /\^C|\/s|ETA|pages|records|Exporting/.test(l))).toEqual([]);
    expect(rest.every((l) => l.length <= 10 || l === 'interrupted')).toBe(true);
    expect(await pane.cursorVisible()).toBe(true);
  });

  it.for([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('%s: the line is cleared', async ([sig, code], { onTestFinished }) => {
    const slow = await ownSlow(onTestFinished);
    const pid = `${dir.path}/${sig}.pid`;
    // The CLI's pid, for the test to signal it (the shell waits on it in the foreground).
    const pane = await inPane(
      80,
      `sh -c 'echo $$ > "$1"; shift; exec "$@"' sh ${quote(pid)} ${cmd(exportArgs(`${sig}.csv`))}`,
      slow,
      onTestFinished,
    );
    await pane.waitForScreen(showsProgressWithEta);
    process.kill(Number(readFileSync(pid, 'utf8')), sig);
    expect(await pane.exited()).toBe(code);
    await expectClean(pane, await pane.screen());
  });

  it('an error: the line is cleared before the message', async ({ onTestFinished }) => {
    const slow = await ownSlow(onTestFinished);
    const pane = await inPane(80, cmd([...exportArgs('e.csv'), '--concurrency', '1']), slow, onTestFinished);
    await pane.waitForScreen(showsProgressWithEta);
    // From now on the emulator refuses the token: the next page fails (not retried).
    slow.mock.faults.add(parseFault('401', '/api/v2/referrals'));
    try {
      expect(await pane.exited()).toBe(ExitCode.auth);
    } finally {
      slow.mock.faults.clear();
    }
    const lines = await pane.screen();
    expect(lines.join('\n')).toMatch(/Export stopped after [\d,]+ referrals/);
    await expectClean(pane, lines);
  });

  it('success: the line is cleared, the summary stays', async ({ onTestFinished }) => {
    const pane = await inPane(80, cmd([...exportArgs('s.csv'), '--per-page', '10']), fx, onTestFinished);
    expect(await pane.exited()).toBe(0);
    const lines = await pane.screen();
    expect(lines.join('\n')).toMatch(/^Exported 300 referral/m); // "… referrals as …" or, with input's summary, "… referral rows …"
    await expectClean(pane, lines);
  });

  it('stdout closed by its reader (EPIPE): the line is cleared on the way out', async ({
    onTestFinished,
  }) => {
    const slow = await ownSlow(onTestFinished);
    const pane = await inPane(
      80,
      // The reader waits (a tmux channel the test signals) until the bar is on screen, then reads
      // one byte and goes: the CLI's next write meets EPIPE. Pages of 5 (~17 KB): the first ones
      // fit in the pipe, so the bar is drawn before the CLI waits on the reader.
      `${cmd(['referrals', 'export', '--format', 'ndjson', '--per-page', '5', '--concurrency', '1'])} | { tmux wait-for go; head -c 1 > /dev/null; }`,
      slow,
      onTestFinished,
    );
    await pane.waitForScreen(showsProgressWithEta);
    await pane.signal('go');
    await pane.exited();
    await expectClean(pane, await pane.screen());
  });
});

describe.concurrent('referrals list --all: the progress line at 80 columns', () => {
  /**
   * At a real terminal (a tmux pane of 80 columns): `list --all` shows the export's
   * progress line on stderr while its records go to a file or a pipe, clears it on Ctrl-C, shows none
   * when the records themselves scroll on that terminal, and after a failed page says the records
   * above are incomplete.
   */

  const dir = tempDir();

  afterAll(() => dir.cleanup());

  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

  const cmd = (args: string[]) => `${CLI} ${args.map(quote).join(' ')}`;

  type Finished = (fn: () => Promise<void>) => void;

  /**
   * A pane of its own for one test, against an emulator of its own (its faults that test's alone):
   * the tests run concurrently, each closing what it opened when it ends.
   */
  async function inPane(command: string, finished: Finished) {
    const slow = mockFixture({ referrals: 3000, latencyMs: 50 });
    await slow.start();
    finished(() => slow.stop());
    const pane = await openPane({ cols: 80, command, env: slow.env() });
    finished(() => pane.close());
    return { pane, slow };
  }

  // 150 pages of 20, one at a time (seconds in all), slow enough to read the line and press Ctrl-C.
  const list = (format: string) => [
    'referrals',
    'list',
    '--all',
    '--format',
    format,
    '--per-page',
    '20',
    '--concurrency',
    '1',
  ];

  const progressLine = (lines: string[]) => lines.find((l) => / pages? /.test(l) && /\/s\b/.test(l));

  const showsProgressWithEta = (lines: string[]) => /ETA \d/.test(progressLine(lines) ?? '');

  /** Nothing of the bar is left on screen (the "^C" a terminal echoes included), the cursor is back. */
  const expectClean = async (pane: Pane, lines: string[]) => {
    expect(lines.filter((l) => /\d+\/\d+ pages|records {2}|\^C|Listing referrals/.test(l))).toEqual([]);
    expect(await pane.cursorVisible()).toBe(true);
  };

  it.for(['ndjson', 'json', 'csv'])(
    '--format %s into a file: fits with room for "^C", then Ctrl-C clears it',
    async (format, { onTestFinished }) => {
      const { pane } = await inPane(
        `${cmd(list(format))} > ${quote(`${dir.path}/out.${format}`)}`,
        onTestFinished,
      );
      const line = progressLine(await pane.waitForScreen(showsProgressWithEta))!;
      expect(line.length).toBeLessThanOrEqual(77);
      expect(line).toMatch(/\d+\/150 pages {2}[\d,]+ records {2}[\d,]+\/s {2}ETA \d+(m\d\ds|s)$/);
      await pane.keys('C-c');
      expect(await pane.exited()).toBe(130);
      const lines = await pane.screen();
      expect(lines).toContain('interrupted');
      await expectClean(pane, lines);
    },
  );

  it('the table, collected before it is shown: the line while pages come, then Ctrl-C clears it', async ({
    onTestFinished,
  }) => {
    const { pane } = await inPane(cmd(list('table')), onTestFinished);
    await pane.waitForScreen(showsProgressWithEta);
    await pane.keys('C-c');
    expect(await pane.exited()).toBe(130);
    await expectClean(pane, await pane.screen());
  });

  it('NDJSON onto the terminal itself: the records scroll, no line is drawn between them', async ({
    onTestFinished,
  }) => {
    const { pane } = await inPane(cmd(list('ndjson')), onTestFinished);
    // The screen that showed 40 records (a second look could find them scrolled or a line half written).
    const lines = await pane.waitForScreen((l) => l.filter((x) => x.startsWith('{"id":')).length >= 40);
    expect(progressLine(lines)).toBeUndefined();
    // Every record line is whole but the last: the screen is read while records still come, and the
    // last one may be half written at that moment.
    const records = lines.filter((x) => x.startsWith('{'));
    expect(records.length).toBeGreaterThanOrEqual(40);
    for (const l of records.slice(0, -1)) expect(() => JSON.parse(l)).not.toThrow();
    await pane.keys('C-c');
    expect(await pane.exited()).toBe(130);
  });

  it('a page that fails after records were shown: the error, and "the output above is incomplete"', async ({
    onTestFinished,
  }) => {
    const { pane, slow } = await inPane(cmd(list('ndjson')), onTestFinished);
    await pane.waitForScreen((lines) => lines.some((l) => l.startsWith('{"id":')));
    // From now on the emulator refuses the token: the next page fails (not retried).
    slow.mock.faults.add(parseFault('401', '/api/v2/referrals'));
    expect(await pane.exited()).toBe(ExitCode.auth);
    const text = (await pane.screen()).join('\n');
    expect(text).toMatch(/Listing stopped after [\d,]+ referrals: the output above is incomplete\./);
    await expectClean(pane, await pane.screen());
  });
});

// In-process runs only: beside the panes of the blocks above.
describe.concurrent('help at the terminal', () => {
  // Help wraps to the terminal, `help A B` shows the verb's help, and the last lines
  // point to documentation that exists where the tool is installed.

  const every = [[], ...GROUPS.map((g) => [g.name]), ...COMMAND_DEFS.map((c) => [...c.path])];

  const help = (words: string[], opts: { columns?: number } = {}) =>
    run([...words, '--help'], opts.columns ? { stdoutIsTTY: true, columns: opts.columns } : {});

  function longLines(text: string, width: number): string[] {
    // The README's path is never cut (it could not be copied); every other line fits.
    return text.split('\n').filter((l) => cells(l) > width && !l.startsWith('Docs: /'));
  }

  describe('help fits the terminal', () => {
    it.each([
      [60, true],
      [80, true],
      [200, true],
      [80, false],
    ])('at %i columns (terminal: %s) no line of any help is wider', async (columns, tty) => {
      for (const words of every) {
        const r = await help(words, tty ? { columns } : {});
        expect(r.code, `${words.join(' ')} --help`).toBe(0);
        expect(longLines(r.stdout, columns), `imaging ${words.join(' ')} --help at ${columns}`).toEqual([]);
      }
    });

    it('at 80 columns a long command term gets its own line and the descriptions still wrap (not "sign test e / vents")', async () => {
      const r = await help([], { columns: 80 });
      expect(r.stdout).toMatch(/\n {2}api \[options\] <method-or-path> \[path\]\n {4,}call any API path/);
      expect(r.stdout).toMatch(/webhook +verify captured deliveries, sign test events, listen\n +locally/);
    });

    it('at 200 columns nothing is wrapped that fits', async () => {
      const r = await help([], { columns: 200 });
      expect(r.stdout).toMatch(/webhook +verify captured deliveries, sign test events, listen locally\n/);
      expect(r.stdout).toContain(
        'Exit codes: 0 ok, 1 failure, 2 usage, 3 auth, 4 not found, 5 forbidden, 6 limit, 7 rejected, 8 webhook not valid, 9 not yet, 10 cannot happen, 130 interrupted.',
      );
    });

    it('an example too long for the width is continued with " \\" (still one shell line), its comment above', () => {
      const ex =
        'imaging referrals export --visit-status booked,report_uploaded --rows visit -o "ready list.csv"   # ready to read';
      const fitted = fitExample(ex, 50);
      expect(fitted.split('\n').every((l) => cells(l) <= 50)).toBe(true);
      expect(fitted.split('\n')[0]).toBe('  # ready to read');
      expect(fitted).toContain('"ready list.csv"');
      const joined = fitted
        .split('\n')
        .slice(1)
        .join('\n')
        .replace(/ \\\n\s+/g, ' ')
        .trim();
      expect(joined).toBe(ex.replace(/ {2,}# .*$/, ''));
    });
  });

  describe('text another part of the tool adds after a command help', () => {
    it('is wrapped to the width too (word-wrapped, keeping its indentation)', async () => {
      const { fitHelpText } = await import('../../src/help/format.js');
      const added = `Fields (--fields a,b,c or --json a,b,c: those, in that order):\n  ${'field_name, '.repeat(8)}end`;
      const fitted = fitHelpText(added, 60);
      expect(fitted.split('\n').every((l) => cells(l) <= 60)).toBe(true);
      expect(fitted.replace(/\s+/g, ' ')).toBe(added.replace(/\s+/g, ' '));
      const indented = fitHelpText(`  ${'field_name, '.repeat(8)}end`, 60).split('\n');
      expect(indented.length).toBeGreaterThan(1);
      expect(indented.every((l) => l.startsWith('  '))).toBe(true);
      expect(fitHelpText('Docs: /a/very/long/path/'.padEnd(90, 'x'), 60)).not.toContain('\n');
    });
  });
});
