import type { Context } from '../context.js';
import { startMockServer } from '../emulator/server.js';
import { CliError, InterruptedError, UsageError } from '../errors.js';
import { requireHttpUrl } from '../util/args.js';

export interface MockOpts {
  port: number;
  referrals: number;
  allowance?: number;
  latency?: number;
  seed: number;
  listShape?: string;
  webhookUrl?: string;
  webhookSecretFile?: string;
  webhookSecretFormat?: string;
  webhookEncoding?: string;
  webhookRetryMs?: number;
  fault?: string[];
  faultDelayMs?: number;
  hostile?: boolean;
}

/** Runs the emulator until Ctrl-C / SIGTERM. Prints its URL on stdout (one line) for scripts. */
export async function mock(ctx: Context, opts: MockOpts): Promise<number> {
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
  const encoding = (opts.webhookEncoding ?? 'hex').toLowerCase();
  if (encoding !== 'hex' && encoding !== 'base64')
    throw new UsageError(`--webhook-encoding: use hex or base64, not "${opts.webhookEncoding}"`);
  const { parseFault, FaultSpecError } = await import('../emulator/faults.js');
  for (const spec of opts.fault ?? []) {
    try {
      parseFault(spec);
    } catch (err) {
      if (err instanceof FaultSpecError) throw new UsageError(`--fault: ${err.message}`);
      throw err;
    }
  }
  let server: Awaited<ReturnType<typeof startMockServer>>;
  try {
    server = await startMockServer({
      port: opts.port,
      seed: opts.seed,
      referrals: opts.referrals,
      allowance: opts.allowance,
      latencyMs: opts.latency,
      referralListShape: opts.listShape === 'bare' ? 'bare' : 'object',
      webhookUrl: opts.webhookUrl,
      webhookKey,
      webhookEncoding: encoding,
      webhookRetryDelayMs: opts.webhookRetryMs,
      faults: opts.fault,
      faultDelayMs: opts.faultDelayMs,
      hostile: Boolean(opts.hostile),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new CliError(
        `port ${opts.port} is already in use on 127.0.0.1`,
        1,
        'Pick another with --port, or 0 for any free port.',
      );
    }
    throw err;
  }
  ctx.io.stdout.write(`${server.url}\n`);
  ctx.note(`imaging mock: emulator listening on ${server.url} (synthetic data; Ctrl-C stops it)`);
  if (opts.hostile)
    ctx.note('Hostile mode: every answer carries terminal escapes, bidi and format characters.');
  if (opts.port === 4010)
    ctx.note('Use it with: imaging --env local <command>   e.g. imaging --env local cpt 73721');
  else ctx.note(`Use it with: imaging --env local --base-url ${server.url} <command>`);
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
  ctx.note('imaging mock: stopped');
  const reason = ctx.signal.reason;
  throw new InterruptedError(reason instanceof InterruptedError ? reason.signal : 'SIGINT', true);
}
