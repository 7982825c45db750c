import { tokenHeaderProblem } from '../../api/client.js';
import { defineCommand } from '../../cli/define.js';
import { envArg } from '../../config/environments.js';
import { AuthError, UsageError } from '../../errors.js';

// Only to a pipe or a file: a terminal's scrollback and screen-sharing keep what it shows.
export default defineCommand({
  path: ['auth', 'token'],
  description:
    'Print the token in use for the environment (IMAGING_TOKEN, else the stored one; the emulator token for local), for scripts. Prints to a pipe or a file only; add --yes to show it on a terminal.',
  examples: ['imaging auth token | sha256sum'],
  async run(ctx) {
    const env = ctx.environment().value;
    const token = ctx.token(env).value;
    if (!token)
      throw new AuthError(`not logged in to the ${env} environment`, `Run: imaging auth login${envArg(env)}`);
    const problem = tokenHeaderProblem(token);
    if (problem)
      throw new AuthError(
        `the ${env} token in use cannot be sent: ${problem}`,
        `Copy the token again from where it was issued, then: imaging auth login${envArg(env)} --with-token < token.txt`,
      );
    if (ctx.io.stdoutIsTTY && !ctx.globals.yes)
      throw new UsageError(
        'the token is printed to a pipe or a file, not to a terminal',
        'Pipe it to what needs it (imaging auth token | …), or add --yes to show it here.',
      );
    ctx.io.stdout.write(`${token}\n`);
    return 0;
  },
});
