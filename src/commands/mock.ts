import { once } from 'node:events';
import { requireHttpUrl } from '../cli/args.js';
import { defineCommand } from '../cli/define.js';
import { duration, formatDuration, millis } from '../cli/duration.js';
import { choice, file, flag, int, list, port, text } from '../cli/options.js';
import { CliError, InterruptedError, UsageError } from '../errors.js';

/** Runs the emulator until Ctrl-C / SIGTERM. Prints its URL on stdout (one line) for scripts. */
export default defineCommand({
  path: ['mock'],
  description:
    'Serves synthetic referrals, reference data, auto-book and webhooks on 127.0.0.1. It takes any token that starts with mock- and no other (--env local sends mock-token); mock-expired, mock-exhausted and mock-disabled answer as an expired, used-up or disabled sandbox token does. Reports are real small PDFs, linked once a visit reaches report_uploaded, and each referral\'s files (reports and documents) are served in one of four ways, chosen from its id: on the emulator\'s own origin below /api/v2, by a redirect from there, or on a second "storage" origin (another port on 127.0.0.1) with signed links that expire in 7 days or have already expired (an expired link answers an HTML page, as a storage service does).',
  options: {
    port: port('--port <n>', 'port on 127.0.0.1 (0 picks a free one)', { default: 4010 }),
    referrals: int('--referrals <n>', 'how many synthetic referrals to serve', {
      max: 1_000_000,
      default: 300,
    }),
    allowance: int(
      '--allowance <n>',
      'successful requests per token before 429 sandbox_request_limit_reached',
    ),
    latency: millis(
      '--latency <ms>',
      'delay added to every answer: milliseconds, or a duration (250ms, 2s)',
      {
        min: 0,
        max: 3_600_000,
      },
    ),
    seed: int('--seed <n>', 'seed of the synthetic data set', { min: 0, default: 1 }),
    listShape: choice(
      '--list-shape <shape>',
      ['object', 'bare'],
      'GET /referrals answers { referrals, meta } (object) or a bare array',
    ),
    ignoreSearch: flag('--ignore-search', 'GET /referrals ignores q, as a server without list search does'),
    webhookUrl: text('--webhook-url <url>', 'send signed webhooks here (the group webhook_url)'),
    allowWebhookPort: list(
      '--allow-webhook-port <port>',
      "a loopback port an auto-book request's own webhook_url may name, beside --webhook-url's (repeatable)",
    ),
    webhookSecretFile: file('--webhook-secret-file <file>', 'signing secret (else IMAGING_WEBHOOK_SECRET)'),
    webhookSecretFormat: text('--webhook-secret-format <format>', 'raw (default) or base64'),
    webhookEncoding: text('--webhook-encoding <encoding>', 'signature digest text: hex (default) or base64'),
    fault: list(
      '--fault <mode[:count][@after]>',
      'inject a fault: let AFTER API requests through (default 0), then answer COUNT of them (default 1, * for all) with MODE: 500, 502, reset, slow, truncated, 429 or 401 (repeatable)',
    ),
    faultDelayMs: int('--fault-delay-ms <ms>', 'how long a slow fault holds its answer (default 15000)'),
    webhookRetryMs: int(
      '--webhook-retry-ms <ms>',
      'first retry delay of a failed delivery (default 1000, doubling)',
    ),
    advanceEvery: duration(
      '--advance-every <duration>',
      'every visit under way takes a step this often (5s, 1m), some stopping at exam_not_completed or canceled',
    ),
    autoBookDelay: duration(
      '--auto-book-delay <duration>',
      'how long an auto-book attempt stays processing (default 2s); its address picks the outcome: no_availability, booking_failed, contacted_for_booking, else booked',
    ),
    hostile: flag(
      '--hostile',
      'serve terminal escapes, bidi and format characters in every string, header and reason phrase',
    ),
  },
  async run(ctx, _args, opts) {
    let webhookKey: Buffer | undefined;
    if (opts.webhookUrl !== undefined) {
      requireHttpUrl('--webhook-url', opts.webhookUrl);
      const { loadSecret } = await import('../webhook/secret.js');
      const secret = await loadSecret(ctx, {
        secretFile: opts.webhookSecretFile,
        secretFormat: opts.webhookSecretFormat,
      });
      webhookKey = secret.key;
    }
    if (opts.advanceEvery === 0) throw new UsageError('--advance-every must be 1s or more');
    const encoding = (opts.webhookEncoding ?? 'hex').toLowerCase();
    if (encoding !== 'hex' && encoding !== 'base64')
      throw new UsageError(`--webhook-encoding: use hex or base64, not "${opts.webhookEncoding}"`);
    const webhookPorts = (opts.allowWebhookPort ?? []).map((p) => {
      const n = Number(p);
      if (!/^\d+$/.test(p) || n < 1 || n > 65535)
        throw new UsageError(`--allow-webhook-port: "${p}" is not a port (1 to 65535)`);
      return n;
    });
    const { startMockServer, FaultSpecError } = await import('../emulator/server.js');
    const server = await startMockServer({
      port: opts.port,
      seed: opts.seed,
      referrals: opts.referrals,
      allowance: opts.allowance,
      latencyMs: opts.latency,
      referralListShape: opts.listShape === 'bare' ? 'bare' : 'object',
      ignoreSearch: Boolean(opts.ignoreSearch),
      webhookUrl: opts.webhookUrl,
      webhookPorts,
      webhookKey,
      webhookEncoding: encoding,
      webhookRetryDelayMs: opts.webhookRetryMs,
      faults: opts.fault,
      faultDelayMs: opts.faultDelayMs,
      hostile: Boolean(opts.hostile),
      advanceEveryMs: opts.advanceEvery,
      autoBookDelayMs: opts.autoBookDelay,
    }).catch((err: NodeJS.ErrnoException) => {
      if (err instanceof FaultSpecError) throw new UsageError(`--fault: ${err.message}`);
      if (err.code !== 'EADDRINUSE') throw err;
      const hint = 'Pick another with --port, or 0 for any free port.';
      throw new CliError(`port ${opts.port} is already in use on 127.0.0.1`, 1, hint);
    });
    ctx.io.stdout.write(`${server.url}\n`);
    const advancing = opts.advanceEvery
      ? `; visits advance one step every ${formatDuration(opts.advanceEvery)}`
      : '';
    ctx.note(
      `imaging mock: emulator listening on ${server.url} (synthetic data${advancing}; Ctrl-C stops it)`,
    );
    if (opts.hostile)
      ctx.note('Hostile mode: every answer carries terminal escapes, bidi and format characters.');
    if (opts.port === 4010)
      ctx.note('Use it with: imaging --env local <command>   e.g. imaging --env local cpt 73721');
    else ctx.note(`Use it with: imaging --env local --base-url ${server.url} <command>`);
    if (!ctx.signal.aborted) await once(ctx.signal, 'abort');
    await server.close();
    ctx.note('imaging mock: stopped');
    const reason = ctx.signal.reason;
    throw new InterruptedError(reason instanceof InterruptedError ? reason.signal : 'SIGINT', true);
  },
});
