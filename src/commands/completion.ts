import { defineCommand } from '../cli/define.js';
import { arg } from '../cli/options.js';
import { completionScript, INSTALL, SHELLS, type Shell } from '../completion/scripts.js';
import { UsageError } from '../errors.js';

export default defineCommand({
  path: ['completion'],
  description: `The script completes commands, subcommands, flags, the values of enumerated flags (--env, --format, --rows, --visit-status, event names, …) and file names for file flags, from the same definitions the parser uses.

How to install it:
${Object.values(INSTALL)
  .map((text) => text.replace(/^# ?/gm, '  '))
  .join('\n')}`,
  args: [arg('<shell>', SHELLS.join(', '), { values: SHELLS })],
  async run(ctx, [shell]) {
    const s = shell.trim().toLowerCase() === 'pwsh' ? 'powershell' : shell.trim().toLowerCase();
    if (!(SHELLS as readonly string[]).includes(s))
      throw new UsageError(`no completion for "${shell}"`, `Shells: ${SHELLS.join(', ')}.`);
    ctx.io.stdout.write(completionScript(s as Shell));
    return 0;
  },
});
