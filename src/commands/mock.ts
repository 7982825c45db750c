import type { Context } from '../context.js';
import { CliError, InterruptedError } from '../errors.js';
import { startMockServer } from '../mock/server.js';

export interface MockOpts {
  port: number;
  referrals: number;
  allowance?: number;
  latency?: number;
  seed: number;
  listShape?: string;
}

/** Runs the emulator until Ctrl-C / SIGTERM. Prints its URL on stdout (one line) for scripts. */
export async function mock(ctx: Context, opts: MockOpts): Promise<number> {
  let server: Awaited<ReturnType<typeof startMockServer>>;
  try {
    server = await startMockServer({
      port: opts.port,
      seed: opts.seed,
      referrals: opts.referrals,
      allowance: opts.allowance,
      latencyMs: opts.latency,
      referralListShape: opts.listShape === 'bare' ? 'bare' : 'object',
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
