import { describe, expect, it } from 'vitest';
import { sleep } from '../../src/api/retry.js';
import { InterruptedError } from '../../src/errors.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

describe('a pause longer than a Node timer holds (2^31-1 ms, 24.8 days)', () => {
  it('waits, rather than firing after 1 ms with a TimeoutOverflowWarning; an abort still ends it', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      for (const ms of [MAX_TIMER_MS + 1, 25 * 86_400_000, 366 * 86_400_000, Number.POSITIVE_INFINITY]) {
        const ac = new AbortController();
        let settled = 'no';
        const p = sleep(ms, ac.signal).then(
          () => (settled = 'resolved'),
          (err) => (settled = err instanceof InterruptedError ? 'interrupted' : String(err)),
        );
        await new Promise((r) => setTimeout(r, 100));
        expect(settled).toBe('no');
        ac.abort();
        await p;
        expect(settled).toBe('interrupted');
      }
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a short or nonsensical one is over at once', async () => {
    for (const ms of [0, -5, Number.NaN, 20]) {
      const t0 = Date.now();
      await sleep(ms);
      expect(Date.now() - t0).toBeLessThan(200);
    }
  });
});
