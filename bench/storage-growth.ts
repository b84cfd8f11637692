// What makes anvil slower as a chain grows: not its history of blocks and transactions but the size of
// its state. A bare anvil (no state file, no history) takes the baseline burst (one ERC-20 transfer
// per transaction) fresh; then `slots` storage slots are written into one contract's storage with
// `anvil_setStorageAt` (no transaction, no block: the history does not grow at all), and the same burst
// is timed again. Every settled transfer adds one such slot (its EIP-3009 authorization's nonce, kept
// for good by the token: that is what makes it unusable twice), so a chain with 50,000 transfers
// holds 50,000 more slots than a fresh one, whatever the platform does with its history.
import { pad, toHex } from 'viem';
import { erc20Burst, startBareChain } from './bare-chain.ts';
import { ratio, repeat, spread, type Spread } from './measure.ts';

export interface StorageGrowth {
  slots: number;
  /** Seconds it took to write them. */
  writeSeconds: number;
  fresh: Spread;
  after: Spread;
  afterVsFresh: number;
}

export async function measureStorageGrowth(options: { slots: number; burst: number; probes: number }): Promise<StorageGrowth> {
  const chain = await startBareChain();
  try {
    const probe = async () => spread((await repeat(options.probes, () => erc20Burst(chain, options.burst))).map((r) => r.perSecond));
    const fresh = await probe();
    const began = performance.now();
    // Slots of the VIXP contract itself (keys no variable of it uses): the shape of used authorization nonces.
    for (let written = 0; written < options.slots;) {
      const chunk = Array.from({ length: Math.min(500, options.slots - written) }, (_, i) => written + i);
      await Promise.all(chunk.map((n) => chain.client.request({
        method: 'anvil_setStorageAt', params: [chain.token, pad(toHex(2n ** 200n + BigInt(n))), pad('0x01')],
      } as any)));
      written += chunk.length;
    }
    const writeSeconds = Math.round((performance.now() - began) / 1000);
    const after = await probe();
    return { slots: options.slots, writeSeconds, fresh, after, afterVsFresh: ratio(after, fresh) };
  } finally {
    await chain.stop();
  }
}
