import { defineCommand } from '../../cli/define.js';
import { arg } from '../../cli/options.js';
import { CliError, UsageError } from '../../errors.js';
import { KEYS, parseKey, pathKind } from './keys.js';

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
  args: [arg('<key>', 'env, base-url, path.payments or path.notifications', { values: KEYS })],
  async run(ctx, [key]) {
    const k = parseKey(key);
    const format = ctx.format('table');
    const env = ctx.environment();
    const kind = pathKind(k);
    // path.payments / path.notifications: the stored path, else the emulator's documented guess.
    const stored = kind ? ctx.config.environment(env.value).paths?.[kind] : undefined;
    const { value, source } = kind
      ? { value: stored ?? `/api/v2/referrals/{id}/${kind}`, source: stored ? 'config' : 'default' }
      : k === 'env'
        ? env
        : ctx.baseUrl(env.value);
    if (!value) throw new CliError(`base-url is not set for ${env.value}`);
    if (kind && stored !== undefined) {
      // A hand-edited path is shown only once it is one the tool would use (never raw escapes).
      const { checkRecordPath } = await import('../../api/endpoints/referral-records.js');
      try {
        checkRecordPath(kind, stored);
      } catch (err) {
        throw new UsageError(
          `the stored ${k} of ${env.value} is not usable: ${(err as Error).message}`,
          `Set it again: imaging config set ${k} '/api/v2/…/{id}/…'${env.value === 'sandbox' ? '' : ` --env ${env.value}`} (or imaging config unset ${k} for the default)`,
        );
      }
    }
    const where = `${FROM[source] ?? `from ${source}`}${k !== 'env' ? ` (${env.value})` : ''}`;
    if (format === 'json') {
      ctx.io.stdout.write(`${JSON.stringify({ key: k, value, source, environment: env.value }, null, 2)}\n`);
      return 0;
    }
    // Through the sanitiser: a checked value has nothing for it to change, and an odd one is shown safely.
    ctx.out.line(value);
    ctx.note(`${k}: ${where}`);
    return 0;
  },
});
