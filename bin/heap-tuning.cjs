'use strict';
// Loaded by the launcher only for the commands that stream many pages: see bin/imaging.cjs.
const v8 = require('node:v8');
const { PerformanceObserver } = require('node:perf_hooks');

/** A semi-space of the young generation grows to this and no further (V8's own limit: 16-32 MB). */
const YOUNG_CAP = 8 * 1024 * 1024;

module.exports = function tuneHeapForStreaming() {
  v8.setFlagsFromString('--heap-growing-percent=10');
  // V8 grows the young generation (doubling it, or by smaller steps on Node 26) after a scavenge
  // that leaves it busy; once doubling would pass the cap, growing becomes 1x. Checked after each
  // GC, from Node's own GC notifications.
  // The notification comes after the GC, on the event loop: during a long synchronous stretch (a
  // page parsed, a chunk built) V8 may grow it once more before we hear of it (12.25 MB seen on
  // Node 24 when growth stopped only at 4 -> 8). So growth stops once it is past a quarter of the
  // cap: a late step then lands at the cap, not past it.
  const observer = new PerformanceObserver(() => {
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (!young || young.space_size * 4 > YOUNG_CAP) {
      v8.setFlagsFromString('--semi-space-growth-factor=1');
      observer.disconnect();
    }
  });
  observer.observe({ entryTypes: ['gc'] });
};
