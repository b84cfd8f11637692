// `--only=x402`: x402 settles on a chain that mines every 2 s (`anvil --block-time 2`), arriving as a
// Poisson process at 10/s, one payment per payer, as resource servers send them (verify, then settle)
// with payments signed by the published client (`@x402/evm` 2.27.0). First through the platform's
// facilitator (its relayer batches them); then, on the same chain in the same run, the same payers
// paying the same payee again through the published `exact` facilitator, which sends one
// `transferWithAuthorization` per payment (the public facilitators' way). Gas per payment is the
// gas used by the transactions the settles answered over the payments they carried.
import { createPublicClient, createTestClient, http, parseEther, parseUnits, type Hex, type PublicClient } from 'viem';
import { foundry } from 'viem/chains';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { PaymentRequirements } from '@x402/core/types';
import { addFacilitatorKey } from '../src/x402/facilitator-keys.ts';
import { createFacilitatorKeyRepository } from '../src/store/facilitator-key-repository.ts';
import type { LoadClient } from './load-client.ts';
import { percentile } from './measure.ts';
import { platformOn, startIntervalAnvil, transactionsOf } from './real-chain.ts';
import type { PoissonX402Result, X402Facilitator } from './x402-load.ts';

export interface X402SettlesPlan {
  /** Payments per facilitator, one per payer. */
  payments: number;
  ratePerSecond: number;
  blockTime: number;
  /** Signer accounts of the published facilitator (each settles one payment at a time, as its signer waits for the receipt). */
  publishedSigners: number;
  log(message: string): void;
}

export interface FacilitatorFigures {
  settled: number;
  failed: number;
  firstError?: string;
  settlementTransactions: number;
  blocks: number;
  paymentsPerTransaction: number;
  transactionsPerBlock: number;
  gasPerPayment: number;
  calldataBytesPerPayment: number;
  /** The settle call, sent to answered (the platform answers once its transaction is mined; so does the published facilitator). */
  settleP50Ms: number;
  settleP99Ms: number;
  /** Verify and settle, as a resource server waits for them. */
  verifyAndSettleP50Ms: number;
  verifyAndSettleP99Ms: number;
}

export interface X402SettlesResult {
  blockTimeSeconds: number;
  ratePerSecond: number;
  payments: number;
  amount: string;
  publishedSigners: number;
  platform: FacilitatorFigures;
  /** One transferWithAuthorization per payment (@x402/evm/exact/facilitator 2.27.0). */
  published: FacilitatorFigures;
  /** Platform gas per payment over the published facilitator's. */
  gasRatio: number;
}

async function figuresOf(client: PublicClient, result: PoissonX402Result): Promise<FacilitatorFigures> {
  const settled = result.settles.filter((s) => s.success);
  const failed = result.settles.filter((s) => !s.success);
  const hashes = [...new Set(settled.map((s) => s.transaction as Hex))];
  const mined = await transactionsOf(client, hashes);
  const blocks = new Set(mined.map((tx) => tx.blockNumber)).size;
  const perPayment = (value: number) => (settled.length === 0 ? Number.NaN : value / settled.length);
  const settle = settled.map((s) => s.answeredAt - s.sentAt);
  const whole = settled.map((s) => s.verifyAndSettleMs);
  return {
    settled: settled.length, failed: failed.length, ...(failed[0] && { firstError: failed[0].errorReason ?? 'failed' }),
    settlementTransactions: hashes.length, blocks,
    paymentsPerTransaction: Number((settled.length / Math.max(1, hashes.length)).toFixed(2)),
    transactionsPerBlock: Number((hashes.length / Math.max(1, blocks)).toFixed(2)),
    gasPerPayment: Math.round(perPayment(Number(mined.reduce((sum, tx) => sum + tx.gasUsed, 0n)))),
    calldataBytesPerPayment: Math.round(perPayment(mined.reduce((sum, tx) => sum + tx.calldataBytes, 0))),
    settleP50Ms: Math.round(percentile(settle, 0.5)), settleP99Ms: Math.round(percentile(settle, 0.99)),
    verifyAndSettleP50Ms: Math.round(percentile(whole, 0.5)), verifyAndSettleP99Ms: Math.round(percentile(whole, 0.99)),
  };
}

const describe = (f: FacilitatorFigures) => `${f.settled} settled ${f.failed} failed${f.firstError ? ` (${f.firstError})` : ''}, ${f.settlementTransactions} tx in ${f.blocks} blocks (${f.paymentsPerTransaction}/tx), ${f.gasPerPayment} gas, ${f.calldataBytesPerPayment} B per payment, settle p50 ${f.settleP50Ms} ms p99 ${f.settleP99Ms} ms`;

export async function measureX402Settles(plan: X402SettlesPlan, load: LoadClient): Promise<X402SettlesResult> {
  const anvil = await startIntervalAnvil(plan.blockTime);
  try {
    const client = createPublicClient({ chain: foundry, transport: http(anvil.url, { batch: { batchSize: 100 } }) }) as PublicClient;
    const controls = createTestClient({ mode: 'anvil', chain: foundry, transport: http(anvil.url) });
    plan.log(`x402, ${plan.blockTime} s blocks: platform, ${plan.payments} payers minted VIXP`);
    const bench = await platformOn(anvil.url, {});
    let platformRun: PoissonX402Result;
    let requirements: PaymentRequirements;
    const payers = Array.from({ length: plan.payments }, () => generatePrivateKey());
    const amount = parseUnits('0.01', 18).toString();
    try {
      const { platform } = bench;
      const { key } = await addFacilitatorKey({ keys: createFacilitatorKeyRepository(platform.store.db), clock: Date.now }, { name: 'bench resource server', ratePerSecond: 10_000 });
      // Each payer holds VIXP, and so does the payee (a store's account after its first payment), as in docs/performance.md's settlement figures.
      const payee = privateKeyToAccount(generatePrivateKey()).address;
      for (let i = 0; i < payers.length; i += 50) {
        await Promise.all(payers.slice(i, i + 50).map((payer) => platform.wallet.mint('ethereum', { to: privateKeyToAccount(payer).address, amount: '1' })));
      }
      await platform.wallet.mint('ethereum', { to: payee, amount: '1' });
      requirements = {
        scheme: 'exact', network: `eip155:${platform.chains.ethereum.chainId}`, asset: platform.contracts.ethereum.vixpToken, amount, payTo: payee,
        maxTimeoutSeconds: 300, extra: { name: 'VIXP', version: '1' },
      };
      const facilitator: X402Facilitator = { kind: 'platform', url: `${bench.baseUrl}/x402`, apiKey: key };
      platformRun = await load.run({ kind: 'poisson-x402', facilitator, payers, requirements, ratePerSecond: plan.ratePerSecond, seed: 402 });
    } finally {
      await bench.stop();
    }
    const platform = await figuresOf(client, platformRun);
    plan.log(`  platform facilitator: ${describe(platform)}`);

    plan.log(`x402, ${plan.blockTime} s blocks: the published exact facilitator, ${plan.publishedSigners} signer accounts, the same payers and payee`);
    const signerKeys = Array.from({ length: plan.publishedSigners }, () => generatePrivateKey());
    for (const key of signerKeys) await controls.setBalance({ address: privateKeyToAccount(key).address, value: parseEther('1000') });
    const publishedRun = await load.run({
      kind: 'poisson-x402', facilitator: { kind: 'published', rpcUrl: anvil.url, chainId: foundry.id, signerKeys }, payers, requirements, ratePerSecond: plan.ratePerSecond, seed: 402,
    });
    const published = await figuresOf(client, publishedRun);
    plan.log(`  published facilitator: ${describe(published)}`);
    const gasRatio = Number((platform.gasPerPayment / published.gasPerPayment).toFixed(3));
    plan.log(`  gas per payment ${platform.gasPerPayment} vs ${published.gasPerPayment}: ${gasRatio}x`);
    return {
      blockTimeSeconds: plan.blockTime, ratePerSecond: plan.ratePerSecond, payments: plan.payments, amount, publishedSigners: plan.publishedSigners,
      platform, published, gasRatio,
    };
  } finally {
    await anvil.stop();
  }
}
