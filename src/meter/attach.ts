import type { EnvironmentName } from '../config/environments.js';
import { describeView, Meter, meterKey, meterPath } from './meter.js';

export type { Meter };

interface MeterHost {
  readonly env: NodeJS.ProcessEnv;
  readonly globals: { readonly verbose?: boolean | undefined };
  now(): Date;
  note(line: string): void;
}

/** The meter of a sandbox client (by environment name, so the emulator can stand in), else undefined. */
export function sandboxMeter(
  ctx: MeterHost,
  env: EnvironmentName,
  baseUrl: string,
  token: string | undefined,
): Meter | undefined {
  if (env !== 'sandbox' || !token) return undefined;
  try {
    return new Meter(meterPath(ctx.env), meterKey(new URL(baseUrl).origin, token), () => ctx.now().getTime());
  } catch {
    return undefined;
  }
}

export function settleMeters(ctx: MeterHost, meters: Iterable<Meter>): void {
  for (const meter of meters) {
    try {
      const crossing = meter.close();
      if (crossing) {
        ctx.note(
          crossing.crossed >= 100
            ? `warning: the meter says the sandbox allowance is used up: ${describeView(crossing.view, ctx.now().getTime())}; the sandbox answers 429 sandbox_request_limit_reached once it is.`
            : `warning: over ${crossing.crossed}% of the sandbox allowance is used: ${describeView(crossing.view, ctx.now().getTime())}.`,
        );
        ctx.note(
          'See it with: imaging auth allowance (if the token was also used elsewhere: imaging auth allowance --used N)',
        );
      }
      if (meter.off && ctx.globals.verbose)
        ctx.note(
          `Note: the allowance meter is off for this run: ${meter.off}; this run's requests were not counted.`,
        );
      else if (meter.failure && ctx.globals.verbose)
        ctx.note(
          `Note: the allowance meter could not be updated (${meter.failure}); this run's requests were not counted.`,
        );
    } catch {}
  }
}
