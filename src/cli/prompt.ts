import { InterruptedError, UsageError } from '../errors.js';
import type { IO, Prompter } from '../io.js';
import { HumanStream } from '../output/text.js';
import { wrapMessage } from '../output/wrap.js';

/** Prompts on the terminal through inquirer; refuses (exit 2) when stdin is not a terminal. */
export function terminalPrompter(io: IO, signal?: AbortSignal): Prompter {
  const ensureTty = (what: string) => {
    if (!io.stdinIsTTY) {
      throw new UsageError(`cannot ask for ${what}: standard input is not a terminal`);
    }
  };
  const wrap = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      // Stopped by a signal: its own InterruptedError (its exit code), not Ctrl-C's.
      if (signal?.aborted && signal.reason instanceof InterruptedError) throw signal.reason;
      throw interruptedIfCtrlC(err);
    }
  };
  return {
    async secret(message) {
      ensureTty('a secret');
      const { default: password } = await import('@inquirer/password');
      return wrap(() => password({ message, mask: false }, { input: io.stdin, output: io.stderr, signal }));
    },
    async confirm(message) {
      ensureTty('a confirmation');
      const { createInterface } = await import('node:readline/promises');
      const rl = createInterface({ input: io.stdin, output: io.stderr });
      try {
        // Wrapped to stderr's width, words whole; readline asks on the last line.
        const width = io.stderrIsTTY ? io.errColumns : undefined;
        const lines = (width ? wrapMessage(`${message} [y/N]`, width - 1) : `${message} [y/N]`).split('\n');
        const last = lines.pop() ?? '';
        if (lines.length > 0) new HumanStream(io.stderr).write(`${lines.join('\n')}\n`);
        const answer = await wrap(() => rl.question(`${last} `, signal ? { signal } : {}));
        return /^y(es)?$/i.test(answer.trim());
      } finally {
        rl.close();
      }
    },
  };
}

/** Ctrl-C at a prompt (inquirer's ExitPromptError, readline's AbortError) is an interrupt. */
export function interruptedIfCtrlC(err: unknown): unknown {
  const e = err as NodeJS.ErrnoException;
  if (
    e instanceof Error &&
    (e.name === 'ExitPromptError' || e.name === 'AbortError' || e.code === 'ABORT_ERR')
  ) {
    return new InterruptedError('SIGINT');
  }
  return err;
}
