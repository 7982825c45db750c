/**
 * Timers for any length of wait. Node's timers take at most MAX_TIMER_MS (a signed 32-bit count):
 * a longer delay fires at once, so a wait fed by a user or a server is made of steps no longer.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fn` once after `ms` (0 for NaN or less), however long; returns what cancels it. */
export function after(ms: number, fn: () => void, opts: { unref?: boolean } = {}): () => void {
  let left = ms > 0 ? ms : 0;
  let timer: ReturnType<typeof setTimeout>;
  const step = () => {
    const d = Math.min(left, MAX_TIMER_MS);
    left -= d;
    timer = setTimeout(left > 0 ? step : fn, d);
    if (opts.unref) timer.unref();
  };
  step();
  return () => clearTimeout(timer);
}

/** Calls `fn` every `ms`, however long, until the returned function is called. */
export function every(ms: number, fn: () => void, opts: { unref?: boolean } = {}): () => void {
  let cancel = () => {};
  const next = () => {
    cancel = after(
      ms,
      () => {
        next();
        fn();
      },
      opts,
    );
  };
  next();
  return () => cancel();
}

/** Resolves after `ms`, however long; rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = after(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
