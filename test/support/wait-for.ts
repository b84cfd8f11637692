import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  /** How long the condition may take before the wait fails. */
  timeoutMs: number;
  /** What is awaited, for the failure: "the app's START_PAY is registered at the desk". */
  message: string;
  /** Pause between checks (default 10 ms). */
  intervalMs?: number;
}

/**
 * Waits until `condition` holds (returns a truthy value, sync or async) and returns that value;
 * fails with `message` once `timeoutMs` has passed. Tests wait for the real condition with it,
 * never for a fixed time. A condition that throws fails the wait at once.
 *
 * @example
 * await waitFor(() => sink.events.length > 0, { timeoutMs: 5000, message: 'the app hears its refusal' });
 */
export async function waitFor<T>(condition: () => T | Promise<T>, options: WaitForOptions): Promise<NonNullable<T>> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() >= deadline) throw new Error(`waited ${options.timeoutMs} ms in vain: ${options.message}`);
    await sleep(options.intervalMs ?? 10);
  }
}
