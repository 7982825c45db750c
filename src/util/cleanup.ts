/**
 * Things to undo however the process ends; each task runs at most once, synchronously (the `exit`
 * event allows nothing else).
 */
const tasks = new Map<() => void, boolean>();
let hooked = false;

/** `unfinished`: work left undone (a temporary file), which changes the exit code of a forced exit. */
export function onForcedExit(task: () => void, unfinished = true): () => void {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => runForcedExitTasks());
  }
  tasks.set(task, unfinished);
  return () => tasks.delete(task);
}

export function runForcedExitTasks(): number {
  const pending = [...tasks];
  tasks.clear();
  for (const [t] of pending) {
    try {
      t();
    } catch {}
  }
  return pending.filter(([, unfinished]) => unfinished).length;
}
