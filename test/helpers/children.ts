/**
 * Processes a test starts die with the test process: a test that fails or times out between
 * starting one and waiting for it (a worker, a `schedule` that never ends, a stopped one) would
 * otherwise leave it running after the suite, and so would an interrupted run.
 */
import type { ChildProcess } from 'node:child_process';

const running = new Set<ChildProcess>();

function killAll(): void {
  // SIGKILL: a process stopped with SIGSTOP acts on nothing else.
  for (const child of running) child.kill('SIGKILL');
}

process.once('exit', killAll);
// Vitest stops a worker with SIGTERM (a run interrupted or ended early), which would end it
// without its 'exit' event; and a worker whose vitest process is gone loses its IPC channel.
process.once('SIGTERM', () => {
  killAll();
  process.exit(128 + 15);
});
process.once('disconnect', killAll);

/** Kills `child` when this process exits, unless it has ended by then. */
export function killOnExit<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}
