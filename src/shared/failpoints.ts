import { writeSync } from 'node:fs';

/**
 * Named failpoints: the fault suite's hooks into the money paths (docs/reliability.md "Failpoints").
 * Test only: a service reaches them through its `faults` dependency, which is `noFaults` (nothing
 * happens) unless the composition root was configured with FAILPOINTS, and the configuration
 * honours FAILPOINTS only in a process a test started with VIXPAY_TEST_FAULTS=1, never with
 * NODE_ENV=production (src/config/config.ts).
 *
 * - A failpoint sits at a step boundary of an operation (`deps.faults?.at('payment.after-transfer')`).
 *   `FAILPOINTS=payment.after-transfer=crash` makes the process kill itself there with SIGKILL, as a
 *   power cut would (nothing after it runs, no handler, no flush); `=crash-chain` kills the chain
 *   node of the payment network there with SIGKILL (once) and goes on; `=error` throws instead, as a
 *   bug or a lost connection there would.
 *
 * No state of this module is process-wide: each composed platform has its own `Faults`. (The
 * mutation check, `npm run test:mutations`, breaks guarantees in a copy of the sources instead: no
 * switch of it is in src/.)
 */

/** Every failpoint, in the order an operation meets them. */
export const failpointNames = [
  // A payment (run-payment.ts).
  'payment.after-claim', 'payment.before-transfer', 'payment.after-transfer', 'payment.after-approve',
  // A payment cancellation (cancel-payment.ts).
  'cancel.after-reserve', 'cancel.before-transfer', 'cancel.after-transfer',
  // A reward claim and a reward cancellation (claim-reward.ts, cancel-reward.ts).
  'reward-claim.after-claiming', 'reward-claim.after-transfer',
  'reward-cancel.after-canceling', 'reward-cancel.after-transfer',
  // REST pay (idempotent-pay.ts): the key claimed, the transfer done, the outcome recorded.
  'rest-pay.after-key-claimed', 'rest-pay.after-transfer', 'rest-pay.before-answer',
  // Every transfer (token API `transfer` and the above, wallet/transfer.ts): checked, then settled.
  'transfer.before-authorize', 'transfer.after-settle',
  // The relayer's settlement batch (chain/settlement-batcher.ts).
  'relay.before-journal', 'relay.after-journal', 'relay.after-broadcast',
  // An x402 ERC-6492 payer's wallet (x402/deploy-wallet.ts): deployed by the platform, the transfer not sent yet.
  'x402.after-wallet-deployment',
] as const;
export type FailpointName = (typeof failpointNames)[number];

export const failpointActions = ['crash', 'crash-chain', 'error'] as const;
export type FailpointAction = (typeof failpointActions)[number];

/** The error an `error` failpoint throws. */
export class FailpointError extends Error {
  override name = 'FailpointError';
}

/**
 * `name=action,…` (FAILPOINTS). Throws on an unknown failpoint or action, so a typo never silently
 * tests nothing.
 */
export function parseFailpoints(text: string | undefined): ReadonlyMap<FailpointName, FailpointAction> {
  const map = new Map<FailpointName, FailpointAction>();
  for (const entry of (text ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const [name = '', action = '', ...extra] = entry.split('=').map((p) => p.trim());
    if (!(failpointNames as readonly string[]).includes(name)) throw new Error(`unknown failpoint "${name}" (known: ${failpointNames.join(', ')})`);
    if (!(failpointActions as readonly string[]).includes(action) || extra.length > 0) {
      throw new Error(`failpoint entry "${entry}" is not name=${failpointActions.join('|')}`);
    }
    map.set(name as FailpointName, action as FailpointAction);
  }
  return map;
}

/** The failpoints of one composed platform: a service's `faults` dependency. */
export interface Faults {
  /**
   * A step boundary: nothing unless `name` is armed; then a SIGKILL of this process, a SIGKILL of
   * its chain node (`crash-chain`, the first time only), or a thrown FailpointError.
   */
  at(name: FailpointName): void;
  /** How a `crash-chain` failpoint kills the chain node this process runs (the composition root sets it). */
  onChainNodeCrash(kill: () => void): void;
}

/** No failpoint armed: what every service has unless a test configured some. */
export const noFaults: Faults = Object.freeze({ at: () => undefined, onChainNodeCrash: () => undefined });

/** The failpoints `armed` (the configuration's, already refused outside a test process). */
export function createFaults(armed: ReadonlyMap<FailpointName, FailpointAction>): Faults {
  if (armed.size === 0) return noFaults;
  const actions = new Map(armed);
  let killChainNode: (() => void) | undefined;
  return {
    at(name) {
      const action = actions.get(name);
      if (action === undefined) return;
      if (action === 'crash-chain') {
        actions.delete(name);
        if (!killChainNode) throw new FailpointError(`failpoint ${name}: this process runs no chain node`);
        writeSync(2, `failpoint ${name}: chain node killed (SIGKILL)\n`);
        killChainNode();
        return;
      }
      if (action === 'crash') {
        // Written synchronously, the one trace a crash test can read from the dead process's output.
        writeSync(2, `failpoint ${name}: crash (SIGKILL)\n`);
        process.kill(process.pid, 'SIGKILL');
      }
      throw new FailpointError(`failpoint ${name}`);
    },
    onChainNodeCrash(kill) {
      killChainNode = kill;
    },
  };
}
