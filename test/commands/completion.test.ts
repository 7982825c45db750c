import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VISIT_STATUSES } from '../../src/api/types.js';
import { complete } from '../../src/completion/complete.js';
import { completionScript } from '../../src/completion/scripts.js';
import { buildCompletionTable, type CompletionTable } from '../../src/completion/table.js';
import { selectableNames } from '../../src/output/fields.js';
import { COMMANDS } from '../../src/registry.js';
import { CPT_FIELDS } from '../../src/resources/cpt.js';
import { bothForms, expectUsageError, piped } from '../fake-io.js';
import { BIN, ROOT, run, tempDir } from '../helpers.js';
import { openPane } from '../terminal.js';

describe('imaging completion', () => {
  it.each([
    ['bash', /^# bash: add to ~\/\.bashrc/, /^_imaging_complete\(\) \{$/m],
    ['zsh', /^#/, /imaging/],
    ['fish', /^# fish:/, /^complete -c imaging -f -a '\(__imaging_complete\)'$/m],
    ['powershell', /^#/, /Register-ArgumentCompleter/],
  ])(
    'prints the %s script, byte for byte the same on a terminal and in a pipe',
    async (shell, head, body) => {
      const { terminal, piped: p } = await bothForms(['completion', shell]);
      expect(p.code).toBe(0);
      expect(p.stdout).toMatch(head);
      expect(p.stdout).toMatch(body);
      expect(p.stdout).not.toContain('\u001b');
      expect(terminal.stdout).toBe(p.stdout);
      expect(terminal.stderr + p.stderr).toBe('');
    },
  );

  it('names the shells it knows when given another', async () => {
    const r = await piped(['completion', 'tcsh']);
    expectUsageError(r, /no completion for "tcsh"/, 0);
    expect(r.stderr).toContain('bash, zsh, fish, powershell');
    expectUsageError(await piped(['completion']), /missing required argument 'shell'/, 0);
  });
});

describe('completion scripts and what a TAB press offers', () => {
  /**
   * Shell completion: the table comes from the command definitions (the build writes the same table
   * the source gives), the matching logic answers from it, and the scripts work in the real shells:
   * bash (COMP_WORDS / COMP_CWORD and the registered function), zsh (the function under compinit,
   * its compadd calls captured) and fish (`complete -C`). PowerShell cannot be installed offline here:
   * its script's text is checked.
   */
  /** The binary (or a copy) run with these words: its exit status and output, without blocking the worker. */
  const node = (args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, args, { encoding: 'utf8', timeout: 15_000 }, (err, stdout, stderr) =>
        resolve({ status: err ? Number(err.code ?? -1) : 0, stdout, stderr }),
      );
    });

  let table: CompletionTable;

  const dir = tempDir('imaging-completion-');

  beforeAll(async () => {
    table = await buildCompletionTable();
    // `imaging` on PATH, as an installed one would be, and node beside it (the launcher's shebang).
    mkdirSync(join(dir.path, 'bin'));
    symlinkSync(BIN, join(dir.path, 'bin', 'imaging'));
    // '-rf.csv': a file named like an option, which broke fish's __fish_complete_path (`ls -dp` without --).
    for (const f of ['alpha.csv', 'alpine.json', '-rf.csv']) writeFileSync(join(dir.path, f), '');
    mkdirSync(join(dir.path, 'albums'));
    // Each shell's script, written once: the shells below source the file rather than each run
    // asking the binary again. It is the text `imaging completion SHELL` prints (checked below, in
    // "imaging completion SHELL prints the script"); the interactive bash and zsh still run
    // `source <(imaging completion …)` through the real binary themselves.
    mkdirSync(join(dir.path, 'scripts'));
    for (const shell of ['bash', 'zsh', 'fish'] as const)
      writeFileSync(join(dir.path, 'scripts', shell), completionScript(shell));
  });

  const scriptOf = (shell: string) => JSON.stringify(join(dir.path, 'scripts', shell));

  afterAll(() => dir.cleanup());

  const values = (words: string[]) => complete(table, words).candidates.map(([v]) => v);

  /** Ends each answer when several queries run in one shell. */
  const END = '@@end-of-answer@@';

  const found = new Map<string, boolean>();

  const has = (shell: string) => {
    if (!found.has(shell)) found.set(shell, spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0);
    return found.get(shell)!;
  };

  const shellEnv = () => ({
    PATH: `${join(dir.path, 'bin')}:${dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: dir.path,
    IMAGING_CONFIG_DIR: '/nonexistent/imaging-test-config',
  });

  /**
   * Runs a script in a real shell; its stdout. Not synchronous: the shells of the tests below run at
   * once (describe.concurrent), each mostly waiting on the `imaging __complete` processes it starts.
   */
  function inShell(shell: string, args: string[], script: string): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        shell,
        [...args, script],
        { cwd: dir.path, env: shellEnv(), encoding: 'utf8', timeout: 15_000 },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`${shell} exited ${err.code}: ${stderr}\n${stdout}`));
          else resolve(stdout);
        },
      );
    });
  }

  function skipNote(shell: string) {
    if (!has(shell))
      console.warn(
        `SKIPPED: ${shell} is not installed here, so its completion is not tested (.ci/run installs it).`,
      );
    return !has(shell);
  }

  describe.skipIf(skipNote('bash')).concurrent('in real bash', () => {
    /** Each query in turn, in one bash: what the registered function put in COMPREPLY for each. */
    const bashAll = async (queries: Array<[string[], number]>) =>
      (
        await inShell(
          'bash',
          ['--norc', '--noprofile', '-c'],
          `source ${scriptOf('bash')}
complete -p imaging >/dev/null || exit 9
fn="$(complete -p imaging | sed -E 's/.*-F ([^ ]+) .*/\\1/')"
${queries
  .map(
    ([
      words,
      cword,
    ]) => `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${cword}; COMPREPLY=()
"$fn"
printf '%s\\n' "\${COMPREPLY[@]}" ${END}`,
  )
  .join('\n')}`,
        )
      )
        .split(`${END}\n`)
        .slice(0, queries.length)
        .map((answer) => answer.split('\n').filter(Boolean));
    /** Queries and the answers each must get (`sorted`: compared once sorted). */
    const expectBash = async (cases: Array<[string[], number, string[], 'sorted'?]>) => {
      const got = await bashAll(cases.map(([words, cword]) => [words, cword]));
      expect(got.map((answer, i) => (cases[i]![3] ? [...answer].sort() : answer))).toEqual(
        cases.map(([, , want]) => want),
      );
    };

    it('subcommands, flags, enumerated values and file names', async () => {
      await expectBash([
        [['imaging', 'referrals', 'ex'], 2, ['export']],
        // An item of a comma list (which flags take lists, and their values: in-process, below).
        [['imaging', 'referrals', 'export', '--visit-status', 'pending,boo'], 4, ['pending,booked']],
        [['imaging', '--env', ''], 2, ['sandbox', 'production', 'local']],
        [['imaging', 'referrals', 'export', '-o', 'al'], 4, ['albums', 'alpha.csv', 'alpine.json'], 'sorted'],
        [['imaging', 'referrals', 'download', '-D', 'al'], 4, ['albums']],
        // A flag, an enumerated argument: through the same lines as the subcommand and --env's values
        // (each command's flags and values: in-process, below).
      ]);
    });

    it('--flag=VALUE: the words bash cut at "=" are joined again, and the value after "=" is offered', async () => {
      // bash splits `imaging --env=lo` into imaging, --env, =, lo; readline replaces only the part
      // after "=", so the answers are the values alone. (These calls set COMP_WORDS without COMP_LINE:
      // words are joined around a lone "="; the real TAB below gives bash's own COMP_LINE.)
      await expectBash([
        [['imaging', '--env', '=', ''], 3, ['sandbox', 'production', 'local']],
        [['imaging', '--env', '='], 2, ['sandbox', 'production', 'local']],
        [['imaging', '--env', '=', 'lo'], 3, ['local']],
        // (--format=VALUE: the same lines as --env=; export's formats in bash: below.)
        [
          ['imaging', 'referrals', 'export', '-o', '=', 'al'],
          5,
          ['albums', 'alpha.csv', 'alpine.json'],
          'sorted',
        ],
        // A flag given as --flag=value earlier on the line is read as one word.
        [['imaging', '--env', '=', 'local', 'referrals', 'ex'], 5, ['export']],
      ]);
    });

    it('--format offers only what the command takes: export csv, ndjson, json (no table)', async () => {
      await expectBash([
        [['imaging', 'referrals', 'export', '--format', ''], 4, ['csv', 'ndjson', 'json', 'xlsx']],
        [['imaging', 'referrals', 'export', '--format', 't'], 4, []],
        // Every other command's formats: in-process, below (the same answer through the same script).
      ]);
    });

    it.skipIf(!has('tmux'))(
      'a real TAB in an interactive bash (tmux): --env=, --format=nd, -o=PATH and a list after "=" complete',
      async () => {
        mkdirSync(join(dir.path, 'out'), { recursive: true });
        writeFileSync(join(dir.path, 'out', 'ptest.csv'), '');
        const pane = await openPane({
          cols: 200,
          // PATH in the command: tmux gives the pane its server's PATH, not the one passed with -e; no history file (it would be written while the folder goes).
          command: `cd ${JSON.stringify(dir.path)} && HISTFILE= PATH=${JSON.stringify(shellEnv().PATH)} exec bash --norc --noprofile -i`,
          env: shellEnv(),
        });
        try {
          // Keys are typed once the prompt is back after a marker: readline has the terminal again
          // (typed sooner, the terminal's own line editing would take them, C-u and TABs included).
          const promptAfter = (marker: string) => (l: string[]) =>
            l.includes(marker) && l.slice(l.lastIndexOf(marker) + 1).includes('$');
          await pane.keys('PS1="$ "; source <(imaging completion bash); echo RE""ADY', 'Enter');
          await pane.waitForScreen(promptAfter('READY'));
          // Two TABs list the choices (nothing typed after "=" yet). Readline reads keys in order: once
          // the marker typed after them shows, what they did is on the screen.
          await pane.keys('imaging --env=', 'Tab', 'Tab', 'C-u', 'echo MA""RK', 'Enter');
          const listed = await pane.waitForScreen(promptAfter('MARK'));
          expect(
            listed.some((x) => /^local +production +sandbox$/.test(x)),
            listed.join('\n'),
          ).toBe(true);
          await pane.keys(
            'imaging --env=lo',
            'Tab',
            'referrals export --format=nd',
            'Tab',
            `-o=${dir.path}/out/pt`,
            'Tab',
            '--visit-status=pending,boo',
            'Tab',
            // An item of a comma list takes no space after it (it used to: "booked ,can").
            ',can',
            'Tab',
          );
          // The line, commented out, is entered, then a marker.
          await pane.keys('C-a', '# ', 'Enter', 'echo DO""NE', 'Enter');
          const screen = await pane.waitForScreen((l) => l.includes('DONE'));
          // Each TAB completed the value after "=" (a space after it, but for the list's items).
          expect(screen).toContain(
            `$ # imaging --env=local referrals export --format=ndjson -o=${dir.path}/out/ptest.csv --visit-status=pending,booked,canceled`,
          );
        } finally {
          await pane.close();
        }
      },
    );
  });

  describe.skipIf(skipNote('zsh')).concurrent('in real zsh', () => {
    // First the function under compinit, compadd and _files (which only work inside a completion
    // widget) replaced by functions that print what they were given; then a real TAB through zpty.
    const zshAll = async (queries: string[][]) =>
      (
        await inShell(
          'zsh',
          ['-f', '-c'],
          `autoload -U compinit && compinit -u -D
source ${scriptOf('zsh')}
[[ \${_comps[imaging]} == _imaging ]] || { print "not registered"; exit 9 }
compadd() { local d a; while (( $# )); do case $1 in -l) shift;; -d) d=$2; shift 2;; -a) a=$2; shift 2;; *) shift;; esac; done
  print -l -- "\${(@P)a}"; print -l -- "\${(@P)d}" | sed 's/^/shown: /' }
_files() { print FILES "$@" }
${queries.map((words) => `words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}\n_imaging\nprint ${END}`).join('\n')}`,
        )
      )
        .split(`${END}\n`)
        .slice(0, queries.length)
        .map((answer) => answer.split('\n').filter(Boolean));

    it('subcommands with descriptions, enumerated values, file and folder names', async () => {
      expect(
        await zshAll([
          ['imaging', 'referrals', 'pay'],
          ['imaging', 'referrals', 'export', '--rows', 'p'],
          ['imaging', 'referrals', 'create', '--file', ''],
          ['imaging', 'referrals', 'download', '-D', ''],
        ]),
      ).toEqual([
        ['payments', 'shown: payments  -- payments logged against a referral (enabled per account)'],
        ['procedure', 'shown: procedure'],
        ['FILES'],
        ['FILES -/'],
      ]);
    });

    it('a real TAB in an interactive zsh (zpty): the word is completed, or the choices are listed', async () => {
      // Each `zpty -r … PATTERN` waits for the terminal to show the pattern; one that never comes
      // makes the shell time out and the test fail. What was typed never contains what is awaited.
      const out = await inShell(
        'zsh',
        ['-f', '-c'],
        `zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z 'PS1="%% "; autoload -U compinit; compinit -u -D; source <(imaging completion zsh); print RE""ADY'
zpty -r z line '*READY*'
zpty -w -n z $'imaging referrals pay\t'
zpty -r z line '*payments*' && print 'completed: payments'
zpty -w -n z $'\\C-u'
zpty -w -n z $'imaging referrals export --rows \t'
zpty -r z line '*visit*' && [[ $line == *procedure*visit* ]] && print 'listed: procedure referral visit'
zpty -w -n z $'\\C-u'
zpty -w -n z $'imaging webhook verify --request alp\t'
zpty -r z line '*alpine.json*' && [[ $line == *alpha.csv* ]] && print 'listed: alpha.csv alpine.json'
zpty -d z`,
      );
      expect(out.split('\n').filter(Boolean)).toEqual([
        'completed: payments',
        'listed: procedure referral visit',
        'listed: alpha.csv alpine.json',
      ]);
    });
  });

  describe.skipIf(skipNote('fish')).concurrent('in real fish', () => {
    /** `complete -C` of each line in turn, in one fish. */
    const fishAll = async (lines: string[]) =>
      (
        await inShell(
          'fish',
          ['--no-config', '-c'],
          `source ${scriptOf('fish')}\n${lines.map((line) => `complete -C '${line}'; echo ${END}`).join('\n')}`,
        )
      )
        .split(`${END}\n`)
        .slice(0, lines.length)
        .map((answer) => answer.split('\n').filter(Boolean));
    const expectFish = async (cases: Array<[string, unknown]>) =>
      expect(await fishAll(cases.map(([line]) => line))).toEqual(cases.map(([, want]) => want));

    it('subcommands with descriptions, enumerated values and file names', async () => {
      await expectFish([
        [
          'imaging ref',
          ['referrals\tlist, find, show, watch, create, update, auto-book, export and download referrals'],
        ],
        ['imaging referrals export --visit-status pending,bo', ['pending,booked']],
        ['imaging webhook verify --request al', ['albums/', 'alpha.csv', 'alpine.json']],
        ['imaging referrals download -D al', ['albums/']],
        ['imaging --env p', ['production']],
      ]);
    });

    it('--format offers only what the command takes: export csv, ndjson, json (no table)', async () => {
      await expectFish([
        ['imaging referrals export --format ', ['csv', 'json', 'ndjson', 'xlsx']],
        ['imaging referrals export --format t', []],
        // Every other command's formats: in-process, below (the same answer through the same script).
      ]);
    });

    it('file names still complete in a folder holding a file named like an option (-rf.csv)', async () => {
      // Other tests add folders here: the ones this one made must all be listed.
      await expectFish([
        [
          'imaging webhook verify --request ',
          expect.arrayContaining(['-rf.csv', 'albums/', 'alpha.csv', 'alpine.json', 'bin/']),
        ],
        ['imaging referrals export -o -r', ['-rf.csv']],
      ]);
    });
  });

  describe('what a TAB press offers (from the definitions)', () => {
    it('the table the build wrote is the one the definitions give', () => {
      const built = JSON.parse(readFileSync(join(ROOT, 'dist', 'completion.json'), 'utf8'));
      expect(built).toEqual(JSON.parse(JSON.stringify(table)));
    });

    it('commands and groups, then each group’s verbs (every group of the registry, cache included once merged)', () => {
      expect(values([''])).toEqual([...new Set(COMMANDS.map((c) => c.path[0]))]);
      expect(values(['re'])).toEqual(['referrals']);
      for (const group of new Set(COMMANDS.filter((c) => c.path.length === 2).map((c) => c.path[0]!))) {
        const verbs = COMMANDS.filter((c) => c.path[0] === group).map((c) => c.path[1]);
        expect(values([group, ''])).toEqual(verbs);
      }
      expect(values(['referrals', 'pa'])).toEqual(['payments']);
      expect(values(['referrals', 'u'])).toEqual(['update']);
      expect(values(['referrals', 'au'])).toEqual(['auto-book']);
      expect(values(['referrals', 'auto-book', '--strategy', ''])).toEqual([
        'closest',
        'soonest',
        'closest_soonest',
      ]);
      expect(values(['referrals', 'auto-book', '--strategy', 'closest_'])).toEqual(['closest_soonest']);
      expect(values(['referrals', 'update', '--ic'])).toEqual(['--icd10']);
    });

    it('every option of every command, its own first, then the globals', async () => {
      for (const entry of COMMANDS) {
        const def = (await entry.load()).default;
        const own = Object.values(def.options ?? {}).map(
          (o) => (o as { flags: string }).flags.match(/--[\w-]+/)![0],
        );
        const offered = values([...entry.path, '--']);
        expect(offered.slice(0, own.length)).toEqual(own);
        expect(offered).toContain('--env');
        expect(offered).toContain('--help');
      }
      expect(values(['referrals', 'export', '--vi'])).toEqual(['--visit-status']);
      // An option already given is not offered again, unless repeatable.
      expect(values(['referrals', 'export', '--rows', 'visit', '--ro'])).toEqual([]);
      expect(values(['referrals', 'list', '--param', 'a=1', '--pa'])).toEqual(['--page', '--param']);
    });

    it('values of enumerated flags and arguments', () => {
      expect(values(['--env', ''])).toEqual(['sandbox', 'production', 'local']);
      expect(values(['modalities', '--format', ''])).toEqual(['table', 'json', 'ndjson', 'csv']);
      expect(values(['referrals', 'export', '--format=n'])).toEqual(['--format=ndjson']);
      expect(values(['referrals', 'export', '--rows', ''])).toEqual(['referral', 'visit', 'procedure']);
      expect(values(['referrals', 'export', '--visit-status', ''])).toEqual([...VISIT_STATUSES]);
      expect(values(['referrals', 'export', '--visit-status', 'booked,sent_to_'])).toEqual([
        'booked,sent_to_rad',
        'booked,sent_to_rp',
      ]);
      expect(values(['referrals', 'watch', '--until', 'booked,report_'])).toEqual(['booked,report_uploaded']);
      expect(values(['webhook', 'send', ''])).toEqual([
        'visit.status_changed',
        'notification.status_changed',
        'referral.auto_book_completed',
      ]);
      expect(values(['webhook', 'verify', '--encoding', ''])).toEqual(['auto', 'hex', 'base64']);
      expect(values(['completion', ''])).toEqual(['bash', 'zsh', 'fish', 'powershell']);
      expect(values(['config', 'set', 'path.'])).toEqual([
        'path.payments',
        'path.notifications',
        'path.referral_update',
        'path.auto_book',
        'path.sandbox_advance',
        'path.sandbox_fixture',
        'path.sandbox_test_webhook',
      ]);
      // A free-text value, an unknown command: nothing (never a wrong guess).
      expect(values(['law-firms', 'search', ''])).toEqual([]);
      expect(values(['frobnicate', ''])).toEqual([]);
    });

    it('--format: a command that narrows it is offered only its formats, the ones its run accepts', async () => {
      for (const entry of COMMANDS) {
        const def = (await entry.load()).default;
        const offered = values([...entry.path, '--format', '']);
        expect(offered, entry.path.join(' ')).toEqual(
          def.formats ? [...def.formats] : ['table', 'json', 'ndjson', 'csv'],
        );
      }
      expect(values(['referrals', 'export', '--format', ''])).toEqual(['csv', 'ndjson', 'json', 'xlsx']);
      expect(values(['referrals', 'export', '--format=n'])).toEqual(['--format=ndjson']);
      // The flag's description says the same (zsh and fish show it), as the command's help does.
      expect(complete(table, ['referrals', 'export', '--fo']).candidates).toEqual([
        ['--format', 'output format: csv, ndjson, json, xlsx'],
      ]);
      expect(complete(table, ['modalities', '--fo']).candidates).toEqual([
        ['--format', 'output format: table, json, ndjson, csv'],
      ]);
      // Given once (either spelling), it is not offered again.
      expect(values(['referrals', 'export', '--format', 'csv', '--fo'])).toEqual([]);
      expect(values(['referrals', 'export', '--format=csv', '--fo'])).toEqual([]);
      // What is not offered is refused by the command itself (exit 2, before any request).
      const r = await run(['referrals', 'export', '--format', 'table'], {
        env: { IMAGING_CONFIG_DIR: dir.path },
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--format table is not available here');
    });

    it('--fields: the names the command itself takes, as items of a comma list', async () => {
      expect(values(['cpt', '73721', '--fields', ''])).toEqual([...CPT_FIELDS]);
      expect(values(['modalities', '--fields', 's'])).toEqual(['slug']);
      // Each name given is not offered again; nested paths and whole objects both complete.
      expect(values(['referrals', 'list', '--fields', 'id,patient.la'])).toEqual(['id,patient.last_name']);
      expect(values(['referrals', 'list', '--fields=payo'])).toEqual([
        '--fields=payor',
        '--fields=payor.id',
        '--fields=payor.name',
      ]);
      expect(complete(table, ['cpt', '1', '--fields', 'code,']).list).toBe(true);
      // Export: the columns of every row kind and the referral's own fields (its help lists them all).
      expect(values(['referrals', 'export', '--fields', 'procedure_'])).toEqual([
        'procedure_count',
        'procedure_index',
      ]);
      // Every command that takes --fields offers exactly the names it accepts; the others offer none.
      for (const entry of COMMANDS) {
        const def = (await entry.load()).default;
        const names = def.fields ? [...selectableNames(def.fields.flatMap((s) => s.fields))] : [];
        expect(values([...entry.path, '--fields', '']), entry.path.join(' ')).toEqual(names);
      }
    });

    it('a flag the command refuses is not offered: --json, --fields, --bom, --no-formula-guard', async () => {
      const flags = (path: readonly string[]) => values([...path, '--']);
      for (const f of ['--json', '--fields', '--bom', '--no-formula-guard'])
        expect(flags(['referrals', 'watch']), f).not.toContain(f);
      expect(flags(['referrals', 'download'])).toContain('--json');
      expect(flags(['referrals', 'download'])).toContain('--fields');
      for (const f of ['--bom', '--no-formula-guard'])
        expect(flags(['referrals', 'download']), f).not.toContain(f);
      expect(values(['referrals', 'watch', '--js'])).toEqual([]);
      for (const f of ['--json', '--fields', '--bom', '--no-formula-guard'])
        expect(flags(['referrals', 'list']), f).toContain(f);
      for (const f of ['--bom', '--no-formula-guard'])
        expect(flags(['referrals', 'get']), f).not.toContain(f);
      // Each one offered is taken: what a command refuses (exit 2) is never offered for it.
      for (const entry of COMMANDS) {
        const def = (await entry.load()).default;
        const offered = flags(entry.path);
        expect(offered.includes('--json'), entry.path.join(' ')).toBe(
          (def.formats ?? ['json']).includes('json'),
        );
        expect(offered.includes('--fields'), entry.path.join(' ')).toBe(def.fields !== undefined);
        // CSV's options only where CSV is among the formats (get has fields, but no CSV).
        expect(offered.includes('--bom'), entry.path.join(' ')).toBe(
          (def.csv ?? def.fields !== undefined) && (def.formats ?? ['csv']).includes('csv'),
        );
      }
    });

    it('file flags ask the shell for file names, folder flags for folders', () => {
      expect(complete(table, ['referrals', 'export', '-o', '']).files).toBe(true);
      expect(complete(table, ['webhook', 'verify', '--request', 'cap']).files).toBe(true);
      expect(complete(table, ['referrals', 'create', '--file', '']).files).toBe(true);
      expect(complete(table, ['referrals', 'export', '--rows', '']).files).toBe(false);
      // A folder flag: folders only.
      expect(complete(table, ['referrals', 'download', '-D', ''])).toEqual({
        candidates: [],
        files: false,
        folders: true,
      });
    });
  });

  describe.concurrent('imaging __complete (the real binary)', () => {
    it('answers from the table without the CLI bundle: a copy without dist/cli.cjs still completes', async () => {
      const copy = join(dir.path, 'pkg');
      mkdirSync(join(copy, 'bin'), { recursive: true });
      mkdirSync(join(copy, 'dist'));
      copyFileSync(BIN, join(copy, 'bin', 'imaging.cjs'));
      for (const f of ['complete.cjs', 'completion.json'])
        copyFileSync(join(ROOT, 'dist', f), join(copy, 'dist', f));
      const out = await node([
        join(copy, 'bin', 'imaging.cjs'),
        '__complete',
        'referrals',
        'export',
        '--rows',
        '=v',
      ]);
      expect([out.status, out.stdout]).toEqual([0, 'visit\n']);
    });

    it('descriptions after a tab; :files for file flags; nothing (exit 0) when there is no table', async () => {
      const a = await node([BIN, '__complete', '=mod']);
      expect(a.stdout).toBe('modalities\tlist supported modalities\n');
      const b = await node([BIN, '__complete', 'referrals', 'export', '-o', '=']);
      expect(b.stdout).toBe(':files\n');
      const copy = join(dir.path, 'empty');
      mkdirSync(join(copy, 'bin'), { recursive: true });
      mkdirSync(join(copy, 'dist'));
      copyFileSync(BIN, join(copy, 'bin', 'imaging.cjs'));
      copyFileSync(join(ROOT, 'dist', 'complete.cjs'), join(copy, 'dist', 'complete.cjs'));
      const c = await node([join(copy, 'bin', 'imaging.cjs'), '__complete', '=']);
      expect([c.status, c.stdout, c.stderr]).toEqual([0, '', '']);
    });

    it('imaging completion SHELL prints the script; an unknown shell is exit 2', async () => {
      for (const shell of ['bash', 'zsh', 'fish', 'powershell'] as const) {
        const r = await run(['completion', shell]);
        expect(r.code).toBe(0);
        expect(r.stdout).toBe(completionScript(shell));
      }
      const bad = await run(['completion', 'tcsh']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/no completion for "tcsh"/);
      const help = await run(['completion', '--help']);
      expect(help.stdout).toContain('source <(imaging completion bash)');
      expect(help.stdout).toContain('~/.config/fish/completions/imaging.fish');
    });
  });

  describe('PowerShell (pwsh cannot be installed offline here: the script text is checked)', () => {
    it('registers a native completer that asks imaging __complete and handles :files', () => {
      const s = completionScript('powershell');
      expect(s).toContain("Register-ArgumentCompleter -Native -CommandName 'imaging' -ScriptBlock {");
      expect(s).toContain('$answer = & $program __complete @before "=$wordToComplete" 2>$null');
      expect(s).toContain("if ($line -eq ':files') {");
      expect(s).toContain("if ($line -eq ':folders') {");
      expect(s).toContain('$parts = $line -split "`t", 2');
      expect(s).toContain(
        "[System.Management.Automation.CompletionResult]::new($parts[0], $parts[0], 'ParameterValue', $tip)",
      );
      // Balanced braces and parentheses (a syntax slip would break the profile that loads it).
      const count = (c: string) => s.split(c).length - 1;
      expect(count('{')).toBe(count('}'));
      expect(count('(')).toBe(count(')'));
    });
  });
});
