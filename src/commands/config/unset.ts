import { defineCommand } from '../../cli/define.js';
import { arg } from '../../cli/options.js';
import { storedTokenOrigin } from '../../config/store.js';
import { KEY_HELP, KEYS, oldBaseOrigin, parseKey, pathKind } from './keys.js';

export default defineCommand({
  path: ['config', 'unset'],
  args: [arg('<key>', KEY_HELP, { values: KEYS })],
  async run(ctx, [key]) {
    ctx.config.repair((line) => ctx.note(line)); // it can repair a hand-edited config: see ConfigStore.read
    const k = parseKey(key);
    const env = ctx.environment().value;
    const kind = pathKind(k);
    if (kind) {
      await ctx.config.update((c) => {
        const settings = c.environments?.[env];
        if (settings?.paths) {
          delete settings.paths[kind];
          if (Object.keys(settings.paths).length === 0) delete settings.paths;
        }
      });
      const { exampleOf } = await import('../../api/endpoints/operations.js');
      ctx.note(`${k} for ${env} unset (the default ${exampleOf(kind)} is used).`);
      return 0;
    }
    // Bind an old token to the stored base URL first: no base URL given later may capture it.
    const before = ctx.config.environment(env);
    const bind =
      k === 'base-url' && before.token && !storedTokenOrigin(before)
        ? oldBaseOrigin(before.base_url)
        : undefined;
    await ctx.config.update((c) => {
      if (k === 'env') delete c.env;
      else if (c.environments?.[env]) {
        delete c.environments[env].base_url;
        if (bind) c.environments[env].token_origin = bind;
      }
    });
    ctx.note(k === 'env' ? 'Default environment unset (sandbox).' : `base-url for ${env} unset.`);
    if (bind)
      ctx.note(
        `Note: the stored ${env} token had no origin recorded (a config from an older version); it stays bound to ${bind} and will be sent only there.`,
      );
    return 0;
  },
});
