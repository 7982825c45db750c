import { isAbsolute } from 'node:path';
import { cacheLocation, displayPath, privateFolder } from '../../cache/folder.js';
import { defineCommand } from '../../cli/define.js';
import { CliError } from '../../errors.js';

/** The folder of the reference-data cache. */
export default defineCommand({
  path: ['cache', 'path'],
  async run(ctx) {
    const where = cacheLocation(ctx.env);
    const given = ctx.env.IMAGING_CACHE_DIR;
    if (!where && given && !isAbsolute(given))
      throw new CliError(`IMAGING_CACHE_DIR is not an absolute path ("${given}"): no cache is kept`, 1);
    if (!where) {
      throw new CliError(
        'there is no cache folder on this system',
        1,
        'Set IMAGING_CACHE_DIR to an absolute path (no cache is kept on Windows).',
      );
    }
    ctx.io.stdout.write(`${displayPath(where)}\n`);
    const f = privateFolder(ctx.env, false);
    if ('problem' in f && !f.missing) ctx.note(`Note: the cache is not used: ${f.problem}.`);
    return 0;
  },
});
