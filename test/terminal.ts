import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach } from 'vitest';
import { BIN, tempDir } from './helpers.js';

/**
 * A real terminal for a test: a tmux pane of a given size (its own tmux server, on a socket in a
 * temporary folder) running a shell command, read back with `capture-pane` as a person would see it.
 * When the command ends, the pane's title says so (with its exit status): `exited()` waits on that,
 * not on a delay (each look at the pane goes through one tmux control client, and a wait looks
 * again when tmux says the pane wrote something); the pane then stays, live, until closed, so its screen and cursor can be read.
 */

const exec = promisify(execFile);

/** The shell words that run the CLI (the built binary) in a pane. */
export const CLI = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`;

export interface Pane {
  /** The screen's text, wrapped lines joined (-J): a line longer than the pane shows as one. */
  screen(): Promise<string[]>;
  /** Polls the screen until `check` holds (the test's timeout is the only deadline). */
  waitForScreen(check: (lines: string[]) => boolean): Promise<string[]>;
  /** Keys as tmux names them ('C-c'). */
  keys(...keys: string[]): Promise<void>;
  /** Resolves when the command has ended; its exit status. */
  exited(): Promise<number>;
  /** Whether the terminal shows its cursor (read once the command has ended: the pane is still live). */
  cursorVisible(): Promise<boolean>;
  /** Signals a channel a command in the pane waits on (`tmux wait-for NAME`). */
  signal(channel: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * tmux by its full path, looked up once: a process started by name is tried in each folder of PATH
 * in turn, in the child the worker forked, while the worker waits (a tmux process start each time).
 */
const TMUX =
  (process.env.PATH ?? '')
    .split(':')
    .map((d) => join(d, 'tmux'))
    .find((f) => f.startsWith('/') && existsSync(f)) ?? 'tmux';

/** Whether tmux is installed: the tests at a real terminal skip without it. */
export const hasTmux = TMUX.startsWith('/');

/** A word of a tmux command line, quoted for tmux's parser (as a shell would read single quotes). */
const quoteTmux = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

export async function openPane(opts: {
  cols: number;
  rows?: number;
  command: string;
  env?: NodeJS.ProcessEnv;
}): Promise<Pane> {
  const dir = mkdtempSync(join(tmpdir(), 'imaging-tty-'));
  const socket = join(dir, 'tmux.sock');
  const conf = join(dir, 'tmux.conf');
  writeFileSync(conf, 'set -g status off\n'); // every row of the pane is the command's
  const tmux = (...args: string[]) => exec(TMUX, ['-S', socket, '-f', conf, ...args], { encoding: 'utf8' });
  const envArgs = Object.entries({ NO_COLOR: '1', ...opts.env }).flatMap(([k, v]) =>
    v === undefined ? [] : ['-e', `${k}=${v}`],
  );
  // The shell outlives a Ctrl-C (a trap, not an ignore: the command still gets the signal). When
  // the command ends, the shell sets the pane's title to its exit status (after all its output on
  // the same terminal, so the screen is complete once the title shows) and stays until released,
  // so the live terminal's state (the cursor) can still be read.
  const script = `trap : INT\n${opts.command}\nprintf '\\033]2;exit %s\\033\\\\' "$?"\ntmux wait-for release`;
  // One control-mode client per pane (`tmux -C`): commands go down its stdin and their answers come
  // back in order, without a tmux process per look at the screen; and every chunk the pane's program
  // writes is announced (`%output`), so a wait looks again when the screen has changed, not on a timer.
  // The same process makes the session (its own size, detached) and then attaches to it: one tmux
  // process per pane started from the worker.
  const control = spawn(
    TMUX,
    [
      ...['-S', socket, '-f', conf, '-C'],
      ...['new-session', '-d', '-x', String(opts.cols), '-y', String(opts.rows ?? 50)],
      ...[...envArgs, 'sh', '-c', script, ';', 'attach'],
    ],
    { stdio: ['pipe', 'pipe', 'ignore'] },
  );
  const answers: Array<{ resolve: (lines: string[]) => void; reject: (err: Error) => void }> = [];
  let outputs = 0;
  let changed: Array<() => void> = [];
  let reply: string[] | undefined;
  // Commands are sent once the client is attached (tmux says so with %session-changed): one sent
  // sooner can meet "no current target".
  let attached: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    attached = resolve;
  });
  let buffered = '';
  let ours = false;
  control.stdout.setEncoding('utf8');
  control.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (reply !== undefined) {
        const end = /^%(end|error) \d+ \d+ [01]$/.exec(line);
        if (!end) {
          reply.push(line);
          continue;
        }
        const lines = reply;
        reply = undefined;
        // Flags 0: a command this client did not send (the new-session and attach it started with).
        if (!ours) continue;
        const waiter = answers.shift();
        if (end[1] === 'end') waiter?.resolve(lines);
        else waiter?.reject(new Error(`tmux: ${lines.join('\n')}`));
      } else if (/^%begin \d+ \d+ [01]$/.test(line)) {
        reply = [];
        ours = line.endsWith(' 1');
      } else if (line.startsWith('%output ')) {
        outputs++;
        const woken = changed;
        changed = [];
        for (const wake of woken) wake();
      } else if (line.startsWith('%session-changed ')) attached();
    }
  });
  let closed = false;
  control.stdin.on('error', () => undefined); // written after it ended: the answer is refused below
  const gone = new Promise<void>((resolve) => control.on('close', () => resolve()));
  gone.then(() => {
    closed = true;
    for (const waiter of answers.splice(0)) waiter.reject(new Error('tmux control client ended'));
    for (const wake of changed.splice(0)) wake();
  });
  const ask = (command: string) =>
    new Promise<string[]>((resolve, reject) => {
      if (closed) return reject(new Error('tmux control client ended'));
      answers.push({ resolve, reject });
      control.stdin.write(`${command}\n`);
    });
  /** Resolves once the pane has written something since `seen` (or after a while, as a safety net). */
  const outputSince = (seen: number) =>
    outputs !== seen
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 250);
          changed.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
  /** Polls `read` until `check` holds, looking again whenever the pane writes. */
  async function until<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
    for (;;) {
      const seen = outputs;
      const value = await read();
      if (check(value)) return value;
      await outputSince(seen);
    }
  }
  if (!(await Promise.race([ready.then(() => true), gone.then(() => false)])))
    throw new Error('tmux ended before the pane was made');
  let ended: Promise<number> | undefined;
  const pane: Pane = {
    async screen() {
      const lines = (await ask('capture-pane -p -J -S -')).map((l) => l.trimEnd());
      while (
        lines.length > 0 &&
        (lines[lines.length - 1] === '' || /^Pane is dead/.test(lines[lines.length - 1]!))
      )
        lines.pop();
      return lines;
    },
    waitForScreen(check) {
      return until(() => pane.screen(), check);
    },
    async keys(...keys) {
      await ask(['send-keys', ...keys].map(quoteTmux).join(' '));
    },
    exited() {
      // The title is set after all the command's output: once it shows, the screen is complete.
      ended ??= until(
        async () => /^exit (\d+)$/.exec((await ask("display-message -p '#{pane_title}'")).join('').trim()),
        (m) => m !== null,
      ).then((m) => Number(m![1]));
      return ended;
    },
    async cursorVisible() {
      return (await ask("display-message -p '#{cursor_flag}'")).join('').trim() === '1';
    },
    async signal(channel) {
      await ask(`wait-for -S ${quoteTmux(channel)}`);
    },
    async close() {
      // Through the control client, not a tmux process each: the shell is released (it ends, and
      // the session with it), then the server is ended whatever still runs in the pane.
      if (!closed) {
        await ask('wait-for -S release').catch(() => undefined);
        control.stdin.write('kill-server\n');
      }
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      if (!closed) {
        await tmux('kill-server').catch(() => undefined);
        control.kill();
      }
      await gone;
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return pane;
}

const quoteArg = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/**
 * A describe block's scratch folder and tmux panes: a fresh folder before each test, every pane
 * closed and the folder removed after it.
 */
export function paneFixture() {
  let open: Pane[] = [];
  let dir: ReturnType<typeof tempDir> | undefined;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(async () => {
    await Promise.all(open.map((p) => p.close()));
    open = [];
    dir?.cleanup();
  });
  const fixture = {
    get dir() {
      if (!dir) throw new Error('no folder outside a test');
      return dir;
    },
    track(pane: Pane): Pane {
      open.push(pane);
      return pane;
    },
    /** The real binary run with `args` in a pane of `cols` columns, in the scratch folder. */
    async run(args: string[], env: NodeJS.ProcessEnv, cols = 80): Promise<Pane> {
      const command = `cd ${quoteArg(fixture.dir.path)} && ${CLI} ${args.map(quoteArg).join(' ')}`;
      return fixture.track(await openPane({ cols, command, env }));
    },
  };
  return fixture;
}
