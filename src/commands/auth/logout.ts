import { defineCommand } from '../../cli/define.js';
import { CliError } from '../../errors.js';

export default defineCommand({
  path: ['auth', 'logout'],
  async run(ctx) {
    ctx.config.repair((line) => ctx.note(line)); // it can repair a hand-edited config: see ConfigStore.read
    const env = ctx.environment().value;
    const where = ctx.config.tokenStore(env);
    if (where) {
      const { leftInKeychain } = await ctx.config.setToken(env, undefined);
      if (leftInKeychain)
        throw new CliError(
          `the OS keychain could not be reached: ${env} no longer uses its token, but the keychain entry "imaging" for ${env} may still hold it`,
          1,
          'Remove that entry from the OS keychain by hand.',
        );
      ctx.note(
        `Logged out of ${env}: the stored token was removed${where === 'keychain' ? ' from the OS keychain' : ''}.`,
      );
    } else if (
      ctx.config.unusable.some(
        (k) => k === `environments.${env}.token` || k === `environments.${env}.token_origin`,
      )
    ) {
      // A token of the wrong shape ("token": 5) is no usable token, but it is stored: removed too.
      await ctx.config.update(() => {});
      ctx.note(`Logged out of ${env}: the stored token, which was not usable, was removed.`);
    } else {
      ctx.note(`No token is stored for ${env}; nothing to do.`);
    }
    if (ctx.env.IMAGING_TOKEN) ctx.note('Note: IMAGING_TOKEN is still set in this shell and is still used.');
    return 0;
  },
});
