import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BIN } from './helpers.js';

/**
 * A real terminal for a test: a tmux pane of a given size (its own tmux server, on a socket in a
 * temporary folder) running a shell command, read back with `capture-pane` as a person would see it.
 * When the command ends, the pane's title says so (with its exit status): `exited()` waits on that,
 * not on a delay; the pane then stays, live, until closed, so its screen and cursor can be read.
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
  const tmux = (...args: string[]) => exec('tmux', ['-S', socket, '-f', conf, ...args], { encoding: 'utf8' });
  const envArgs = Object.entries({ NO_COLOR: '1', ...opts.env }).flatMap(([k, v]) =>
    v === undefined ? [] : ['-e', `${k}=${v}`],
  );
  // The shell outlives a Ctrl-C (a trap, not an ignore: the command still gets the signal). When
  // the command ends, the shell sets the pane's title to its exit status (after all its output on
  // the same terminal, so the screen is complete once the title shows) and stays until released,
  // so the live terminal's state (the cursor) can still be read.
  const script = `trap : INT\n${opts.command}\nprintf '\\033]2;exit %s\\033\\\\' "$?"\ntmux wait-for release`;
  await tmux(
    'new-session',
    '-d',
    '-x',
    String(opts.cols),
    '-y',
    String(opts.rows ?? 50),
    ...envArgs,
    'sh',
    '-c',
    script,
  );
  let ended: Promise<number> | undefined;
  const pane: Pane = {
    async screen() {
      const { stdout } = await tmux('capture-pane', '-p', '-J', '-S', '-');
      const lines = stdout.split('\n').map((l) => l.trimEnd());
      while (
        lines.length > 0 &&
        (lines[lines.length - 1] === '' || /^Pane is dead/.test(lines[lines.length - 1]!))
      )
        lines.pop();
      return lines;
    },
    async waitForScreen(check) {
      for (;;) {
        const lines = await pane.screen();
        if (check(lines)) return lines;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async keys(...keys) {
      await tmux('send-keys', ...keys);
    },
    exited() {
      ended ??= (async () => {
        for (;;) {
          const { stdout } = await tmux('display-message', '-p', '#{pane_title}');
          const m = /^exit (\d+)$/.exec(stdout.trim());
          if (m) return Number(m[1]);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      return ended;
    },
    async cursorVisible() {
      const { stdout } = await tmux('display-message', '-p', '#{cursor_flag}');
      return stdout.trim() === '1';
    },
    async signal(channel) {
      await tmux('wait-for', '-S', channel);
    },
    async close() {
      await tmux('wait-for', '-S', 'release').catch(() => undefined);
      await tmux('kill-server').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return pane;
}
