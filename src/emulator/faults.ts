/** Fault injection: `--fault MODE[:COUNT][@AFTER]` lets AFTER API requests through, then hits COUNT (`*`: all). */

const FAULT_MODES = ['500', '502', 'reset', 'slow', 'truncated', '429', '401'] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export interface Fault {
  mode: FaultMode;
  count: number;
  after: number;
  path: string | undefined;
  seen: number;
}

export class FaultSpecError extends Error {}

export function parseFault(spec: string, path?: string): Fault {
  const m = /^([a-z0-9]+)(?::(\d+|\*))?(?:@(\d+))?$/i.exec(spec.trim());
  const mode = m?.[1]?.toLowerCase();
  if (!m || !(FAULT_MODES as readonly string[]).includes(mode ?? '')) {
    throw new FaultSpecError(
      `fault "${spec}" is not MODE[:COUNT][@AFTER] with MODE one of ${FAULT_MODES.join(', ')}`,
    );
  }
  const count = m[2] === undefined ? 1 : m[2] === '*' ? Number.POSITIVE_INFINITY : Number(m[2]);
  if (count < 1) throw new FaultSpecError(`fault "${spec}": COUNT must be at least 1`);
  return { mode: mode as FaultMode, count, after: m[3] === undefined ? 0 : Number(m[3]), path, seen: 0 };
}

export class FaultPlan {
  readonly faults: Fault[] = [];
  readonly injected: Record<string, number> = {};

  add(f: Fault): void {
    this.faults.push(f);
  }

  clear(): void {
    this.faults.length = 0;
  }

  /** Every matching fault counts the request. */
  next(path: string): FaultMode | undefined {
    let hit: FaultMode | undefined;
    for (const f of this.faults) {
      if (f.path !== undefined && !path.startsWith(f.path)) continue;
      f.seen++;
      if (hit === undefined && f.seen > f.after && f.seen <= f.after + f.count) hit = f.mode;
    }
    if (hit) this.injected[hit] = (this.injected[hit] ?? 0) + 1;
    return hit;
  }

  describe(): unknown {
    return {
      faults: this.faults.map((f) => ({ ...f, count: Number.isFinite(f.count) ? f.count : '*' })),
      injected: this.injected,
    };
  }
}

export const PROXY_502_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
