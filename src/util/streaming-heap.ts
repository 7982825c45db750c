/** A semi-space of the young generation grows to this and no further (V8's own limit: 16-32 MB). */
const YOUNG_CAP = 8 * 1024 * 1024;
let tuned = false;

/**
 * For the commands that walk every page: caps the young generation's growth and grows the old
 * one's limit 10% at a time, which keeps them within the memory budget (docs/speed.md).
 */
export function tuneHeapForStreaming(): void {
  if (tuned) return;
  tuned = true;
  const { getHeapSpaceStatistics, setFlagsFromString } = process.getBuiltinModule('node:v8');
  const { PerformanceObserver } = process.getBuiltinModule('node:perf_hooks');
  setFlagsFromString('--heap-growing-percent=10');
  // Stopped past a quarter of the cap: the GC notification comes late, and V8 may grow it once more.
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (!young || young.space_size * 4 > YOUNG_CAP) {
      setFlagsFromString('--semi-space-growth-factor=1');
      observer.disconnect();
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}
