import type { Reporter, TestModule } from 'vitest/node';
import './reliability.js';

/** Prints the plain closing line CI reads ("N passed, N failed, N skipped") after vitest's own summary. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const r = { faults: 0, bad: 0, scans: 0, leaks: 0 };
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
        const meta = t.meta();
        r.faults += meta.faultsInjected ?? 0;
        r.bad += meta.badInputs ?? 0;
        r.scans += meta.leakScans ?? 0;
        r.leaks += meta.leaksFound ?? 0;
      }
    }
    if (r.faults + r.bad + r.scans > 0) {
      process.stdout.write(
        `\nreliability: ${r.faults} faults injected, ${r.bad} bad inputs tried, ${r.scans} outputs scanned for secrets, ${r.leaks} leaks found\n`,
      );
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
