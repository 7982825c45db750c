import { clearCache } from '../../cache/reference.js';
import { defineCommand } from '../../cli/define.js';
import { CliError } from '../../errors.js';

/** Deletes every cached answer (every environment and token); the code cache beside it stays. */
export default defineCommand({
  path: ['cache', 'clear'],
  async run(ctx) {
    const r = clearCache(ctx.env);
    if (r.problem) throw new CliError(`the cache folder cannot be used: ${r.problem}`, 1);
    ctx.note(`Removed ${r.removed} cached answer${r.removed === 1 ? '' : 's'}.`);
    return 0;
  },
});
