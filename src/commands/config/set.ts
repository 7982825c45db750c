import { isLoopbackHost, normaliseBaseUrl } from '../../api/url.js';
import { defineCommand } from '../../cli/define.js';
import { arg } from '../../cli/options.js';
import { type EnvironmentName, parseEnvironment } from '../../config/environments.js';
import { originOf, storedTokenOrigin } from '../../config/store.js';
import { KEY_HELP, KEYS, oldBaseOrigin, parseKey, pathKind } from './keys.js';

export default defineCommand({
  path: ['config', 'set'],
  args: [
    arg('<key>', KEY_HELP, { values: KEYS }),
    arg('<value>', "the value; a path.<operation> is '[METHOD] /api/v2/…', {id} where the id goes"),
  ],
  async run(ctx, [key, value]) {
    ctx.config.repair((line) => ctx.note(line)); // it can repair a hand-edited config: see ConfigStore.read
    const k = parseKey(key);
    if (k === 'env') {
      const env = parseEnvironment(value, 'env');
      await ctx.config.update((c) => {
        c.env = env;
      });
      ctx.note(`Default environment set to ${env}.`);
      return 0;
    }
    const env: EnvironmentName = ctx.environment().value;
    const kind = pathKind(k);
    if (kind) {
      const { parseOperationValue, storedForm } = await import('../../api/endpoints/operations.js');
      const route = parseOperationValue(kind, value);
      const stored = storedForm(kind, route);
      await ctx.config.update((c) => {
        c.environments ??= {};
        const settings = (c.environments[env] ??= {});
        settings.paths = { ...settings.paths, [kind]: stored };
      });
      ctx.note(`${k} for ${env} set to ${route.method} ${route.template}.`);
      return 0;
    }
    const url = normaliseBaseUrl(value, 'base-url');
    const before = ctx.config.environment(env);
    // An old unbound token is bound to its base URL before that changes (or to the one typed now).
    let bound = before.token ? storedTokenOrigin(before) : undefined;
    let newlyBound = false;
    if (before.token && !bound) {
      bound = oldBaseOrigin(before.base_url) ?? originOf(url);
      newlyBound = true;
    }
    await ctx.config.update((c) => {
      c.environments ??= {};
      const settings = (c.environments[env] ??= {});
      settings.base_url = url;
      if (bound) settings.token_origin = bound;
    });
    ctx.note(`base-url for ${env} set to ${url}.`);
    if (newlyBound)
      ctx.note(
        `Note: the stored ${env} token had no origin recorded (a config from an older version); it is now bound to ${bound} and will be sent only there.`,
      );
    if (bound && bound !== originOf(url)) {
      ctx.note(
        `Note: the stored ${env} token belongs to ${bound} and will not be sent to ${originOf(url)}. Log in for the new base URL: imaging auth login${env === 'sandbox' ? '' : ` --env ${env}`}`,
      );
    }
    if (url.startsWith('http://') && !isLoopbackHost(new URL(url).hostname)) {
      ctx.note('warning: plain http. The token will not be sent to this host; use https.');
    }
    return 0;
  },
});
