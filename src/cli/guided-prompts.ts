import type { IO } from '../io.js';
import type { Asker, Choice } from '../referrals/guided.js';
import { interruptedIfCtrlC } from './prompt.js';

/**
 * The guided flows' questions, asked with inquirer's prompts on the terminal (standard error), loaded
 * only when a flow starts. Ctrl-C at a question is an interrupt (exit 130), as at any other prompt.
 */
export async function inquirerAsker(io: IO, signal: AbortSignal): Promise<Asker> {
  const p = await import('@inquirer/prompts');
  const context = { input: io.stdin, output: io.stderr, signal };
  const asked = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw interruptedIfCtrlC(err);
    }
  };
  return {
    text: (message, opts = {}) =>
      asked(() =>
        p.input(
          {
            message,
            required: opts.required ?? false,
            ...(opts.default !== undefined ? { default: opts.default } : {}),
            ...(opts.validate ? { validate: opts.validate } : {}),
          },
          context,
        ),
      ),
    select: <T>(message: string, choices: readonly Choice<T>[], def?: T) =>
      asked(() =>
        p.select<T>(
          { message, choices: [...choices], pageSize: 12, ...(def !== undefined ? { default: def } : {}) },
          context,
        ),
      ),
    search: <T>(message: string, source: (term: string, signal: AbortSignal) => Promise<Choice<T>[]>) =>
      asked(() =>
        p.search<T>(
          { message, pageSize: 10, source: (term, opt) => source(term ?? '', opt.signal) },
          context,
        ),
      ),
    confirm: (message, def = false) => asked(() => p.confirm({ message, default: def }, context)),
  };
}
