/**
 * Runs `task` every `intervalMs`, never two at once (a run still going when the next is due is not
 * doubled), without keeping the process alive; `stop` ends it and waits for a run in progress.
 */
export function runPeriodically(task: () => Promise<unknown>, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= task().finally(() => { running = undefined; });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
