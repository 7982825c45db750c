import { CliError } from '../../errors.js';
import { defineCommand } from '../define.js';
import { arg } from '../options.js';
import { parseKey } from './keys.js';

export default defineCommand({
  path: ['config', 'get'],
  args: [arg('<key>', 'env or base-url')],
  async run(ctx, [key]) {
    const k = parseKey(key);
    const value =
      k === 'env' ? ctx.config.read().env : ctx.config.environment(ctx.environment().value).base_url;
    if (!value) {
      throw new CliError(
        k === 'env'
          ? 'env is not set (the default is sandbox)'
          : `base-url is not set for ${ctx.environment().value}`,
      );
    }
    ctx.io.stdout.write(`${value}\n`);
    return 0;
  },
});
