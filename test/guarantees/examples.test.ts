import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, startMockServer } from '../../src/emulator/server.js';
import { InterruptedError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import { signatureHeaderValue } from '../../src/webhook/sign.js';
import { BIN, fakeIO, ROOT, run, runRaw, tempDir, until } from '../helpers.js';
import { VISIT_EVENT } from '../webhook-fixture.js';

/**
 * Every example in README.md, docs/recipes.md and every command's --help runs against the
 * emulator, exits as expected (0 unless listed below) and prints something (on stdout or into the
 * file it names), so docs and tool cannot drift apart. Examples are read from the documents' ```sh,
 * ```bash and ```console blocks (a `$ ` line in a console block; other blocks, a crontab say, are
 * not run) and from the `Examples:` section of every command's --help; each runs in bash
 * (`set -o pipefail`) with `imaging` on PATH, in a folder holding the files the examples name
 * (below), with its own empty config folder and IMAGING_ENV=local pointed at an emulator this file
 * starts (and IMAGING_WEBHOOK_SECRET set, as the webhook recipes export it). `ID`, `REFERRAL_ID`
 * and `VISIT_ID` stand for a referral (with visits) and one of its visits.
 */

/** The documents whose examples run. */
const DOCUMENTS = ['README.md', 'docs/recipes.md'];

/** Examples that cannot run here, and why. An entry that no longer matches an example fails. */
const NOT_RUN: Record<string, string> = {
  'imaging auth login --base-url https://api.example.com':
    'a real account: it prompts for a real token on a terminal',
  'imaging auth login --env production --base-url https://…':
    'a real account (production), and a URL left to the reader',
  'imaging sso --open': 'a browser',
  'imaging referrals create': 'asks on a terminal (create.test.ts drives it in a tmux pane)',
  'imaging referrals create --dry-run': 'asks on a terminal (create.test.ts drives it in a tmux pane)',
  'imaging completion zsh > "${fpath[1]}/_imaging"':
    "zsh syntax, writing into the shell's own folder (completion.test.ts runs the script in a real zsh)",
  'imaging completion fish > ~/.config/fish/completions/imaging.fish':
    "writes into fish's own folder (completion.test.ts runs the script in a real fish)",
  'imaging referrals watch --from referrals.csv --format ndjson > changes.ndjson':
    'waits for visits to move, which they do not in this emulator (watch.test.ts watches an export against one where they do)',
  'imaging referrals watch --from open.csv --format ndjson > changes.ndjson':
    'waits for visits to move, which they do not in this emulator (watch.test.ts watches an export against one where they do)',
};

/** Examples run with something added to the environment, and why. */
const ENV_FOR: Record<string, Record<string, string>> = {
  // The meter counts sandbox tokens only: the emulator stands in for the sandbox, as in allowance.test.ts.
  'auth allowance': { IMAGING_ENV: 'sandbox', IMAGING_TOKEN: 'mock-token' },
};

/** Receivers the `webhook send` examples name, sent to a receiver this file starts instead. */
const RECEIVERS = ['http://127.0.0.1:4030/', 'https://hooks.example.com/imaging'];

/** Examples that show a failure on purpose, with the exit code they show. */
const EXPECTED_EXIT: Record<string, number> = {
  'imaging webhook verify --request reindented.http --secret-file secret.txt --tolerance 300': 8,
  'imaging --env local law-firms create --name "O\'Brien & Associates, P.C." --city Philadelphia --state PA': 7,
};

/**
 * Commands that change a setting and only say so on stderr, and `config list`, which in the empty
 * config folder each example gets has nothing to list and says so on stderr: stdout may be empty.
 */
const QUIET = ['auth login', 'auth logout', 'config set', 'config unset', 'config list'];
/** Servers: run with --port 0 (fixed ports may be taken), stopped with Ctrl-C once they say where they listen. */
const SERVERS = ['mock', 'webhook listen'];

interface Example {
  command: string;
  sources: string[];
}

/** `cmd   # comment` -> `cmd` (two or more spaces before the #, as the examples write them). */
const stripComment = (line: string) => line.replace(/ {2,}# .*$/, '').trimEnd();
const isImaging = (cmd: string) => /^(?:[A-Z_]+=\S*\s+)*imaging(?:\s|$)/.test(cmd);

/** Lines continued with a trailing backslash, joined. */
function joinContinued(lines: Array<{ text: string; line: number }>) {
  const out: Array<{ text: string; line: number }> = [];
  for (let i = 0; i < lines.length; i++) {
    let { text } = lines[i]!;
    const start = lines[i]!.line;
    while (/\s\\$/.test(text) && i + 1 < lines.length)
      text = `${text.slice(0, -1).trimEnd()} ${lines[++i]!.text.trim()}`;
    out.push({ text, line: start });
  }
  return out;
}

function documentExamples(document: string): Array<{ command: string; source: string }> {
  const lines = readFileSync(join(ROOT, document), 'utf8').split('\n');
  const found: Array<{ command: string; source: string }> = [];
  let lang: string | undefined;
  let block: Array<{ text: string; line: number }> = [];
  lines.forEach((text, i) => {
    const fence = /^```(\w*)\s*$/.exec(text);
    if (fence && lang === undefined) {
      lang = fence[1] ?? '';
      block = [];
      return;
    }
    if (fence) {
      if (['sh', 'bash', 'console'].includes(lang!)) {
        const commands =
          lang === 'console'
            ? block
                .filter((l) => l.text.startsWith('$ '))
                .map((l) => ({ text: l.text.slice(2), line: l.line }))
            : block;
        for (const c of joinContinued(commands)) {
          const command = stripComment(c.text.trim());
          if (isImaging(command)) found.push({ command, source: `${document}:${c.line}` });
        }
      }
      lang = undefined;
      return;
    }
    if (lang !== undefined) block.push({ text, line: i + 1 });
  });
  return found;
}

async function helpExamples(): Promise<Array<{ command: string; source: string }>> {
  const { COMMANDS, GROUPS } = await import('../../src/registry.js');
  const paths = [[], ...GROUPS.map((g) => [g.name]), ...COMMANDS.map((c) => [...c.path])];
  const found: Array<{ command: string; source: string }> = [];
  for (const path of paths) {
    // In-process, piped (80 columns): the same text the binary prints, without 30 process starts.
    const r = await run([...path, '--help']);
    const source = `imaging ${[...path, '--help'].join(' ')}`;
    if (r.code !== 0) throw new Error(`${source} exited ${r.code}: ${r.stderr}`);
    const lines = r.stdout.split('\n');
    const at = lines.indexOf('Examples:');
    if (at < 0) continue;
    const section: Array<{ text: string; line: number }> = [];
    for (let i = at + 1; i < lines.length && lines[i]!.startsWith('  '); i++) {
      // A comment moved above a long example (help at a narrow width) is not a command.
      if (!lines[i]!.trim().startsWith('#')) section.push({ text: lines[i]!, line: i + 1 });
    }
    for (const c of joinContinued(section)) {
      const command = stripComment(c.text.trim());
      if (isImaging(command)) found.push({ command, source });
    }
  }
  return found;
}

function collect(all: Array<{ command: string; source: string }>): Example[] {
  const byCommand = new Map<string, Example>();
  for (const { command, source } of all) {
    const e = byCommand.get(command) ?? { command, sources: [] };
    e.sources.push(source);
    byCommand.set(command, e);
  }
  return [...byCommand.values()];
}

/** The command path an example runs (`referrals export`, `cpt`), global options skipped. */
function pathOf(command: string): string {
  const words = command.replace(/^(?:[A-Z_]+=\S*\s+)*imaging\s*/, '').split(/\s+/);
  const out: string[] = [];
  for (let i = 0; i < words.length && out.length < 2; i++) {
    const w = words[i]!;
    if (w.startsWith('-')) {
      if (['--env', '--base-url', '--format', '--timeout'].includes(w)) i++;
      continue;
    }
    if (out.length === 1 && !/^[a-z][a-z-]*$/.test(w)) break;
    out.push(w);
  }
  return out.join(' ');
}

const examples = collect([...DOCUMENTS.flatMap(documentExamples), ...(await helpExamples())]);

let mock: MockServer;
let work: ReturnType<typeof tempDir>;
let shim: string;
let receiver: Server;
let receiverUrl: string;
const vars: Record<string, string> = {};
const SECRET = 'test_secret_123';

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  // The group webhook the sandbox examples deliver to (sandbox test-webhook, sandbox advance).
  // 100 referrals: every page an example asks for, and the referrals they name (R-240001 to
  // R-240008), with a fraction of the default's 300 for the exports and --all lists to walk.
  mock = await startMockServer({
    port: 0,
    referrals: 100,
    webhookUrl: receiverUrl,
    webhookKey: Buffer.from(SECRET),
  });
  work = tempDir('imaging-examples-');
  // `imaging` on PATH, as `npm link` puts it.
  shim = join(work.path, 'bin');
  mkdirSync(shim);
  writeFileSync(join(shim, 'imaging'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, {
    mode: 0o755,
  });
  const referral = mock.referrals.slice(0, 50).find((r) => r.visits.length > 0)!;
  vars.REFERRAL_ID = referral.id;
  vars.ID = referral.id;
  vars.VISIT_ID = referral.visits[0]!.id;
  // The files the examples name.
  const files = join(work.path, 'files');
  mkdirSync(files);
  const body = Buffer.from(JSON.stringify(VISIT_EVENT));
  const now = String(Math.floor(Date.now() / 1000));
  const capture = (b: Buffer, ts: string, sig: string) =>
    Buffer.concat([
      Buffer.from(
        `POST /hooks HTTP/1.1\r\nHost: partner.example\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\nX-Service-Event: visit.status_changed\r\nX-Service-Timestamp: ${ts}\r\nX-Service-Signature: ${sig}\r\n\r\n`,
      ),
      b,
    ]);
  const key = Buffer.from(SECRET);
  writeFileSync(join(files, 'secret.txt'), `${SECRET}\n`);
  writeFileSync(
    join(files, 'delivery.http'),
    capture(body, now, signatureHeaderValue(key, now, body, 'hex')),
  );
  // Re-indented on the way, three days old: the recipes show it failing.
  const old = String(Number(now) - 3 * 86_400);
  writeFileSync(
    join(files, 'reindented.http'),
    capture(
      Buffer.from(JSON.stringify(VISIT_EVENT, null, 2)),
      old,
      signatureHeaderValue(key, old, body, 'hex'),
    ),
  );
  writeFileSync(join(files, 'event.json'), body);
  writeFileSync(join(files, 'body.json'), body);
  writeFileSync(join(files, 'token.txt'), 'mock-token\n');
  writeFileSync(join(files, 'case-referrals.txt'), 'R-240002\nR-240004\n');
  writeFileSync(join(files, 'update.json'), JSON.stringify({ referral: { wc_number: 'WCB-2026-00042' } }));
  // The documents' own sample payload (the block after <!-- referral.json -->), so it cannot rot.
  const sample = DOCUMENTS.map((d) => readFileSync(join(ROOT, d), 'utf8'))
    .map((text) => /<!-- referral\.json -->\n```json\n([\s\S]*?)\n```/.exec(text)?.[1])
    .find((found) => found !== undefined);
  if (!sample)
    throw new Error(`${DOCUMENTS.join(', ')}: the <!-- referral.json --> sample payload is missing`);
  JSON.parse(sample);
  writeFileSync(join(files, 'referral.json'), sample);
});
afterAll(async () => {
  await mock?.close();
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  work?.cleanup();
});

function substitute(command: string): string {
  if (pathOf(command) === 'webhook send')
    for (const url of RECEIVERS) command = command.split(url).join(receiverUrl);
  return command.replace(/\b(REFERRAL_ID|VISIT_ID|ID)\b/g, (name) => vars[name]!);
}

/** Files (below `dir`) and their sizes, to see what an example wrote. */
function sizes(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  // Regular files only: the config and cache folders (.config, .cache) are not output.
  for (const name of readdirSync(dir)) {
    const st = statSync(join(dir, name));
    if (st.isFile() && !name.startsWith('.')) out.set(name, st.size);
  }
  return out;
}

/**
 * The arguments of a plain command line: `imaging` and words, bare or quoted whole, nothing for the
 * shell to do (no pipe, redirection, variable, glob or assignment). Undefined for any other line.
 */
function plainArgv(command: string): string[] | undefined {
  const words: string[] = [];
  const word = /\s*(?:([\w./,:=+@%^-]+)|'([^']*)'|"([^"$`\\!]*)")(?=\s|$)/y;
  while (word.lastIndex < command.length) {
    const m = word.exec(command);
    if (!m) return undefined;
    words.push(m[1] ?? m[2] ?? m[3]!);
  }
  return words[0] === 'imaging' ? words.slice(1) : undefined;
}

/**
 * A plain command line, or one whose only shell work is its standard output to a file, or its
 * standard input from one, in the example's folder (`imaging … > NAME`, `imaging … < NAME`): its
 * arguments and that file's name.
 */
function plainRun(command: string): { argv: string[]; out?: string; in?: string } | undefined {
  const redirected = /^(.*\S)\s+([<>])\s*([\w][\w.-]*)$/.exec(command);
  const argv = plainArgv(redirected ? redirected[1]! : command);
  if (!argv) return undefined;
  if (!redirected) return { argv };
  return redirected[2] === '>' ? { argv, out: redirected[3]! } : { argv, in: redirected[3]! };
}

/**
 * Plain command lines run in-process (the same code as the binary, in the example's folder: one at a
 * time, as the folder is the process's), a `> NAME` after one writing its standard output there and
 * a `< NAME` giving it its standard input, as the shell would; every other line the shell has work
 * in (pipes, other redirections, variables) runs in bash with the real binary on PATH.
 */
let inProcess: Promise<unknown> = Promise.resolve();
function runInProcess(argv: string[], dir: string, env: NodeJS.ProcessEnv, out?: string, input?: string) {
  const turn = inProcess.then(async () => {
    const before = process.cwd();
    process.chdir(dir);
    try {
      const r = await runRaw(argv, {
        env,
        ...(input !== undefined ? { stdin: readFileSync(join(dir, input)) } : {}),
      });
      if (out === undefined) return r;
      writeFileSync(join(dir, out), r.stdoutBytes);
      return { ...r, stdout: '' };
    } finally {
      process.chdir(before);
    }
  });
  inProcess = turn.catch(() => undefined);
  return turn;
}

/**
 * The first example of each server runs in bash with the real binary (a real SIGINT); the others
 * in-process, stopped as main stops a command at SIGINT (the same code; the process's own handling
 * of the signal is proved by that first one, and by startup.test.ts and interrupts.test.ts).
 */
const REAL_SERVER = new Set(
  SERVERS.map((path) => examples.find((e) => !NOT_RUN[e.command] && pathOf(e.command) === path)?.command),
);
function serveInProcess(argv: string[], dir: string, env: NodeJS.ProcessEnv) {
  const turn = inProcess.then(async () => {
    const before = process.cwd();
    process.chdir(dir);
    try {
      const { io, stdout, stderr } = fakeIO();
      const ac = new AbortController();
      const done = main(argv, {
        io,
        env: { PATH: process.env.PATH, IMAGING_KEYCHAIN: 'off', ...env },
        signal: ac.signal,
      });
      let said = false; // ended before it listened: the checks below say how
      const ended = () => {
        said = true;
      };
      done.then(ended, ended);
      await until(
        () => (said || /http:\/\/127\.0\.0\.1:\d+/.test(stdout() + stderr()) ? true : undefined),
        'where it listens',
      );
      ac.abort(new InterruptedError('SIGINT'));
      return { code: await done, stdout: stdout(), stderr: stderr(), wrote: [] as string[] };
    } finally {
      process.chdir(before);
    }
  });
  inProcess = turn.catch(() => undefined);
  return turn;
}

let n = 0;
async function runExample(e: Example) {
  const dir = join(work.path, `run-${++n}`);
  mkdirSync(dir);
  for (const name of readdirSync(join(work.path, 'files')))
    writeFileSync(join(dir, name), readFileSync(join(work.path, 'files', name)));
  const env = {
    PATH: `${shim}:${process.env.PATH}`,
    HOME: dir,
    IMAGING_ENV: 'local',
    IMAGING_BASE_URL: mock.url,
    IMAGING_CONFIG_DIR: join(dir, '.config'),
    IMAGING_CACHE_DIR: join(dir, '.cache'),
    // As the webhook recipes export it.
    IMAGING_WEBHOOK_SECRET: SECRET,
    NO_COLOR: '1',
    ...ENV_FOR[pathOf(e.command)],
  };
  const path = pathOf(e.command);
  let command = substitute(e.command);
  if (SERVERS.includes(path)) {
    command = command.replace(/\s*&$/, '').replace(/--port \d+/, '--port 0');
    if (!/--port /.test(command)) command += ' --port 0';
    const argv = plainArgv(command);
    if (argv && !REAL_SERVER.has(e.command)) return { ...(await serveInProcess(argv, dir, env)), command };
    const child = execa('bash', ['-c', `exec ${command}`], {
      cwd: dir,
      env,
      extendEnv: false,
      reject: false,
    });
    let seen = '';
    await new Promise<void>((resolve, reject) => {
      const look = (d: Buffer) => {
        seen += d.toString();
        if (/http:\/\/127\.0\.0\.1:\d+/.test(seen)) resolve();
      };
      child.stdout?.on('data', look);
      child.stderr?.on('data', look);
      child.on('exit', () => reject(new Error(`exited before it said where it listens:\n${seen}`)));
    });
    child.kill('SIGINT');
    const r = await child;
    return {
      code: r.exitCode,
      stdout: String(r.stdout),
      stderr: String(r.stderr),
      wrote: [] as string[],
      command,
    };
  }
  const before = sizes(dir);
  const plain = plainRun(command);
  if (plain) {
    const r = await runInProcess(plain.argv, dir, env, plain.out, plain.in);
    const wrote = [...sizes(dir)].filter(([k, size]) => size > 0 && before.get(k) !== size).map(([k]) => k);
    return { code: r.code, stdout: r.stdout, stderr: r.stderr, wrote, command, inProcess: true };
  }
  const r = await execa('bash', ['-c', `set -o pipefail\n${command}`], {
    cwd: dir,
    env,
    extendEnv: false,
    reject: false,
    timeout: 20_000,
  });
  const wrote = [...sizes(dir)].filter(([k, size]) => size > 0 && before.get(k) !== size).map(([k]) => k);
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr), wrote, command };
}

describe('every example in README.md, docs/recipes.md and --help runs against the emulator', () => {
  it('finds the examples (each document, and help)', () => {
    for (const document of DOCUMENTS)
      expect(
        examples.filter((e) => e.sources.some((s) => s.startsWith(`${document}:`))).length,
      ).toBeGreaterThan(5);
    expect(examples.filter((e) => e.sources.some((s) => !s.startsWith('imaging'))).length).toBeGreaterThan(
      20,
    );
    expect(examples.filter((e) => e.sources.some((s) => s.startsWith('imaging'))).length).toBeGreaterThan(20);
  });

  it('runs a good share through bash and the real binary (pipes, redirections, variables, servers)', () => {
    const run = examples.filter((e) => !NOT_RUN[e.command]);
    const inBash = run.filter((e) => !plainRun(e.command) || REAL_SERVER.has(e.command));
    expect(inBash.length).toBeGreaterThanOrEqual(10);
    expect(run.length - inBash.length).toBeGreaterThan(20); // and the plain ones in-process
  });

  it('lists no example that is not there any more', () => {
    const commands = new Set(examples.map((e) => e.command));
    const stale = [...Object.keys(NOT_RUN), ...Object.keys(EXPECTED_EXIT)].filter((k) => !commands.has(k));
    expect(stale, 'entries of NOT_RUN / EXPECTED_EXIT that match no example: remove or update them').toEqual(
      [],
    );
  });

  // Concurrently (vitest's default of 5 at a time): each waits mostly on its own processes.
  it.concurrent.for(examples.map((e) => [e.command, e] as const))('%s', async ([, e], { expect }) => {
    const where = `example from ${e.sources.join(', ')}:\n  ${e.command}\n`;
    if (NOT_RUN[e.command]) return;
    expect(
      e.command,
      `${where}holds "…" (a value left out for the page): write a value that runs, or list it in NOT_RUN with the reason`,
    ).not.toContain('…');
    const r = await runExample(e);
    const expected = EXPECTED_EXIT[e.command] ?? (SERVERS.includes(pathOf(e.command)) ? 130 : 0);
    const said = `${where}ran as: ${r.command}\nexit ${r.code}\nstdout:\n${r.stdout.slice(0, 2000)}\nstderr:\n${r.stderr.slice(0, 2000)}`;
    expect(
      r.code,
      `${said}\n-> exited ${r.code}, not ${expected} (list it in EXPECTED_EXIT if the failure is the point)`,
    ).toBe(expected);
    const out =
      expected === 0 && QUIET.includes(pathOf(e.command)) ? r.stderr : `${r.stdout}${r.wrote.join('')}`;
    const outputOf = expected === 0 ? 'stdout or the file it names' : 'stdout or stderr';
    // An empty JSON list or object is nothing printed too.
    expect(
      ['', '[]', '{}'].includes((expected === 0 ? out : `${r.stdout}${r.stderr}`).replace(/\s/g, '')),
      `${said}\n-> printed nothing on ${outputOf}`,
    ).toBe(false);
  });
});
