import { CliError } from '../../errors.js';
import { defineCommand } from '../define.js';
import { arg } from '../options.js';
import { parseKey } from './keys.js';

const FROM: Record<string, string> = {
  '--env': 'from --env',
  '--base-url': 'from --base-url',
  IMAGING_ENV: 'from IMAGING_ENV',
  IMAGING_BASE_URL: 'from IMAGING_BASE_URL',
  config: 'stored in the config',
  default: 'the default',
};

/**
 * The value in use, as a request would use it (flag > environment variable > stored > default),
 * on stdout; where it comes from on stderr (and in --json). `auth status` shows the same.
 */
export default defineCommand({
  path: ['config', 'get'],
  args: [arg('<key>', 'env or base-url')],
  async run(ctx, [key]) {
    const k = parseKey(key);
    const format = ctx.format('table', ['table', 'json']);
    const env = ctx.environment();
    const { value, source } = k === 'env' ? env : ctx.baseUrl(env.value);
    if (!value) throw new CliError(`base-url is not set for ${env.value}`);
    const where = `${FROM[source] ?? `from ${source}`}${k === 'base-url' ? ` (${env.value})` : ''}`;
    if (format === 'json') {
      ctx.io.stdout.write(`${JSON.stringify({ key: k, value, source, environment: env.value }, null, 2)}\n`);
      return 0;
    }
    ctx.io.stdout.write(`${value}\n`);
    ctx.note(`${k}: ${where}`);
    return 0;
  },
});
