import { createSsoUrl } from '../api/endpoints/sso.js';
import { isLoopbackHost } from '../api/url.js';
import { defineCommand } from '../cli/define.js';
import { flag } from '../cli/options.js';
import { CliError, ExitCode } from '../errors.js';
import { writeJson } from '../output/write.js';

/** Prints the one-time portal URL on stdout and nothing else. */
export default defineCommand({
  path: ['sso'],
  formats: ['table', 'json'],
  options: {
    open: flag('--open', 'open it in the system browser'),
  },
  async run(ctx, _args, opts) {
    const format = ctx.format('table');
    const res = await createSsoUrl(ctx.api());
    const url = res.data && typeof res.data === 'object' ? res.data.url : undefined;
    if (typeof url !== 'string' || url === '') {
      throw new CliError(
        'the SSO answer has no URL',
        ExitCode.failure,
        res.requestId ? `request id: ${res.requestId}` : undefined,
      );
    }
    if (!isPortalUrl(url)) {
      // Never shown: it is a credential, and it is not fit for a terminal or a browser.
      throw new CliError(
        'the SSO answer is not a single-line absolute https URL; it was not printed or opened',
        ExitCode.failure,
        res.requestId ? `request id: ${res.requestId}` : undefined,
      );
    }
    if (opts.open) {
      const { opened, reason } = await ctx.openUrl(url);
      if (opened) {
        ctx.note('Opened the partner portal in your browser (the link works once).');
        return 0;
      }
      // Not confirmed (no opener, a failed or non-zero opener): the link is printed, never lost.
      ctx.note(
        `The browser did not confirm it opened the page${reason ? ` (${reason})` : ''}. Open this one-time URL yourself (it works once; do not share it):`,
      );
    }
    // --json: the server's object with every field it sent (an expires_at, say), not one rebuilt.
    if (format === 'json') writeJson(ctx.sink(), res.data);
    else ctx.io.stdout.write(`${url}\n`);
    return 0;
  },
});

// A link we print or open: absolute https with a host, and no whitespace, control or format character.
export function isPortalUrl(url: string): boolean {
  if (!/^https?:\/\//i.test(url) || /[\s\p{Cc}\p{Cf}\p{Cs}]/u.test(url)) return false;
  try {
    const u = new URL(url);
    if (u.hostname === '') return false;
    return u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname));
  } catch {
    return false;
  }
}
