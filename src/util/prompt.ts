import type { IO, Prompter } from '../context.js';
import { InterruptedError, UsageError } from '../errors.js';

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
      // inquirer throws ExitPromptError on Ctrl-C; the terminal is restored by then.
      if (err instanceof Error && err.name === 'ExitPromptError') throw new InterruptedError('SIGINT');
      throw err;
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
        const answer = await rl.question(`${message} [y/N] `);
        return /^y(es)?$/i.test(answer.trim());
      } finally {
        rl.close();
      }
    },
  };
}
