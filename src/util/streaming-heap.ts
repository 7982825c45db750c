/** A semi-space of the young generation grows to this and no further (V8's own limit: 16-32 MB). */
const YOUNG_CAP = 8 * 1024 * 1024;
let tuned = false;

/**
 * For the commands that walk every page (`referrals export`, `--all`): each page allocates a few MB,
 * all short-lived, and V8 answers that throughput by growing its young generation and its old
 * generation's limit, which takes the process over its memory budget. Caps the young generation's
 * growth and grows the old one's limit by 10% at a time. Called by those commands before they start.
 */
export function tuneHeapForStreaming(): void {
  if (tuned) return;
  tuned = true;
  // Loaded here, not at start: the other commands never need them.
  const { getHeapSpaceStatistics, setFlagsFromString } = process.getBuiltinModule('node:v8');
  const { PerformanceObserver } = process.getBuiltinModule('node:perf_hooks');
  setFlagsFromString('--heap-growing-percent=10');
  // V8 grows the young generation after a scavenge that leaves it busy; growth is stopped once it
  // is past a quarter of the cap, because the GC notification comes late, on the event loop, and V8
  // may grow it once more before it is heard of.
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (!young || young.space_size * 4 > YOUNG_CAP) {
      setFlagsFromString('--semi-space-growth-factor=1');
      observer.disconnect();
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}
