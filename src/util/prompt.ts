import { InterruptedError, UsageError } from '../errors.js';
import type { IO, Prompter } from '../io.js';

/** Prompts on the terminal through inquirer; refuses (exit 2) when stdin is not a terminal. */
export function terminalPrompter(io: IO): Prompter {
  const ensureTty = (what: string) => {
    if (!io.stdinIsTTY) {
      throw new UsageError(`cannot ask for ${what}: standard input is not a terminal`);
    }
  };
  const wrap = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw interruptedIfCtrlC(err);
    }
  };
  return {
    async secret(message) {
      ensureTty('a secret');
      const { default: password } = await import('@inquirer/password');
      return wrap(() => password({ message, mask: false }, { input: io.stdin, output: io.stderr }));
    },
    async confirm(message) {
      ensureTty('a confirmation');
      const { createInterface } = await import('node:readline/promises');
      const rl = createInterface({ input: io.stdin, output: io.stderr });
      try {
        const answer = await wrap(() => rl.question(`${message} [y/N] `));
        return /^y(es)?$/i.test(answer.trim());
      } finally {
        rl.close();
      }
    },
  };
}

/**
 * Ctrl-C at a prompt: inquirer throws ExitPromptError, readline an AbortError ("Aborted with
 * Ctrl+C"); the terminal is restored by then either way. Both become an interrupt (exit 130).
 */
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
