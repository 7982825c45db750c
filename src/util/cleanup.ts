/**
 * Things to undo however the process ends: a second Ctrl-C, `process.exit()` from a broken pipe,
 * an uncaught error, or the event loop simply running dry. Each task runs at most once, and
 * synchronously (the `exit` event allows nothing else). Kept free of imports so that the CLI's
 * entry can hold it without loading anything at start-up.
 */
const tasks = new Map<() => void, boolean>();
let hooked = false;

/**
 * `unfinished`: the task stands for work left undone (a temporary file), counted by
 * runForcedExitTasks; false for tidying alone (the progress line), which changes no exit code.
 */
export function onForcedExit(task: () => void, unfinished = true): () => void {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => runForcedExitTasks());
  }
  tasks.set(task, unfinished);
  return () => tasks.delete(task);
}

/** Runs and forgets every pending task; returns how many stood for unfinished work. */
export function runForcedExitTasks(): number {
  const pending = [...tasks];
  tasks.clear();
  for (const [t] of pending) {
    try {
      t();
    } catch {
      // best effort: the process is going away
    }
  }
  return pending.filter(([, unfinished]) => unfinished).length;
}
