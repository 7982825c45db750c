import type { Operation } from '../../api/endpoints/operations.js';
import { defineCommand } from '../../cli/define.js';
import { arg } from '../../cli/options.js';
import type { EnvironmentName } from '../../config/environments.js';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { writeJson } from '../../output/write.js';
import { KEY_HELP, KEYS, parseKey, pathKind } from './keys.js';

const FROM: Record<string, string> = {
  '--env': 'from --env',
  '--base-url': 'from --base-url',
  IMAGING_ENV: 'from IMAGING_ENV',
  IMAGING_BASE_URL: 'from IMAGING_BASE_URL',
  config: 'stored in the config',
  default: 'the default',
};

// The value a request would use (flag > environment > stored > default); its source on stderr.
export default defineCommand({
  path: ['config', 'get'],
  formats: ['table', 'json'],
  args: [arg('<key>', KEY_HELP, { values: KEYS })],
  async run(ctx, [key]) {
    const k = parseKey(key);
    const format = ctx.format('table');
    const env = ctx.environment();
    const kind = pathKind(k);
    // path.<operation>: the stored value when usable, else the operation's default (a guess).
    const route = kind ? await pathValue(ctx, env.value, kind) : undefined;
    const { value, source } = route ?? (k === 'env' ? env : ctx.baseUrl(env.value));
    if (!value) throw new CliError(`base-url is not set for ${env.value}`);
    const where = `${FROM[source] ?? `from ${source}`}${k !== 'env' ? ` (${env.value})` : ''}`;
    if (format === 'json') {
      const parts = route ? { method: route.method, path: route.template } : {};
      writeJson(ctx.sink(), { key: k, value, ...parts, source, environment: env.value });
      return 0;
    }
    // Through the sanitiser: a checked value has nothing for it to change, and an odd one is shown safely.
    ctx.out.line(value);
    ctx.note(`${k}: ${where}`);
    return 0;
  },
});

/**
 * `path.<operation>` of `env`: the stored value as stored (a bare path or `METHOD /path`), else the
 * default as `METHOD /path`. A hand-edited value is shown only once it is one the tool would use.
 */
async function pathValue(ctx: Context, env: EnvironmentName, op: Operation) {
  const { operationRoute } = await import('../../config/operations.js');
  const { exampleOf } = await import('../../api/endpoints/operations.js');
  const r = operationRoute(ctx.config, env, op, '{id}');
  return {
    value: r.configured ?? exampleOf(op),
    source: r.configured ? 'config' : 'default',
    method: r.method,
    template: r.template,
  };
}
