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
  // page parsed, a chunk built) V8 may grow it once more first. Node 26 grows in larger, uneven
  // steps (5.875 -> 11.75 MB seen), so there growth stops one step earlier.
  const steps = Number(process.versions.node.split('.')[0]) >= 26 ? 4 : 2;
  const observer = new PerformanceObserver(() => {
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (!young || young.space_size * steps > YOUNG_CAP) {
      v8.setFlagsFromString('--semi-space-growth-factor=1');
      observer.disconnect();
    }
  });
  observer.observe({ entryTypes: ['gc'] });
};
