/**
 * Things to undo if the process is forced to stop at once (a second Ctrl-C). Kept free of imports
 * so that the CLI's entry can hold it without loading anything at start-up.
 */
const tasks = new Set<() => void>();

export function onForcedExit(task: () => void): () => void {
  tasks.add(task);
  return () => tasks.delete(task);
}

export function runForcedExitTasks(): void {
  for (const t of [...tasks]) {
    try {
      t();
    } catch {
      // best effort: the process is going away
    }
  }
  tasks.clear();
}
