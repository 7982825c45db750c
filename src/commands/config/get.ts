import { CliError } from '../../errors.js';
import { defineCommand } from '../define.js';
import { arg } from '../options.js';
import { KEYS, parseKey, pathKind } from './keys.js';

export default defineCommand({
  path: ['config', 'get'],
  args: [arg('<key>', 'env, base-url, path.payments or path.notifications', { values: KEYS })],
  async run(ctx, [key]) {
    const k = parseKey(key);
    const kind = pathKind(k);
    const settings = k === 'env' ? undefined : ctx.config.environment(ctx.environment().value);
    const value = k === 'env' ? ctx.config.read().env : kind ? settings?.paths?.[kind] : settings?.base_url;
    if (!value) {
      throw new CliError(
        k === 'env'
          ? 'env is not set (the default is sandbox)'
          : kind
            ? `${k} is not set for ${ctx.environment().value} (the default is /api/v2/referrals/{id}/${kind})`
            : `base-url is not set for ${ctx.environment().value}`,
      );
    }
    ctx.io.stdout.write(`${value}\n`);
    return 0;
  },
});
