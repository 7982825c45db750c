/** Counters the reliability tests record on their tasks; the summary reporter adds them up. */
declare module '@vitest/runner' {
  interface TaskMeta {
    faultsInjected?: number;
    badInputs?: number;
    leakScans?: number;
    leaksFound?: number;
  }
}

export {};
