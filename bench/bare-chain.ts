// A bare anvil with the VIXP contract on it, and the one-transaction-per-transfer ERC-20 rate it
// takes: the baseline of the token API and of payments, and the probe of the chain-history figure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, encodeDeployData, encodeFunctionData, http, type Address, type Hex, type PublicClient } from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type AnvilProcess } from '../src/chain/anvil-process.ts';
import { startChainCheckpoints } from '../src/chain/chain-checkpoint.ts';
import { loadConfig } from '../src/config/config.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../src/gen/contracts/vixp-token.ts';

/** anvil's ten unlocked development accounts (its default mnemonic); the first deploys and owns VIXP. */
export const devAccounts: Address[] = Array.from({ length: 10 }, (_, addressIndex) =>
  mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex }).address);
const owner = devAccounts[0]!;

export interface BareChain {
  anvil: AnvilProcess;
  client: PublicClient;
  /** Batches concurrent calls into one HTTP request: to read many receipts at once. */
  batchClient: PublicClient;
  token: Address;
  chainId: number;
  /** The state file checkpointed, with the platform's settings. */
  statePath?: string;
  /** Checkpoints taken so far (with the platform's settings), and their durations. */
  checkpoints?: Array<{ block: number; bytes: number; ms: number }>;
  /** Takes a checkpoint now (with the platform's settings). */
  checkpoint?: () => Promise<void>;
  stop(): Promise<void>;
}

/**
 * A fresh anvil with VIXP deployed. `platformSettings` runs it as the platform's chain supervisor
 * does (src/chain/chain-supervisor.ts): its state checkpointed into a file (src/chain/chain-checkpoint.ts)
 * every `CHAIN_CHECKPOINT_SECONDS` of the default configuration at least, and at most 2% of the time.
 */
export async function startBareChain(options: { platformSettings?: boolean } = {}): Promise<BareChain> {
  const chainId = 31337;
  const stateDir = options.platformSettings ? mkdtempSync(path.join(tmpdir(), 'vixpay-bench-chain-')) : undefined;
  const anvil = await startAnvil({ chainId });
  const statePath = stateDir && path.join(stateDir, 'state.json');
  const taken: NonNullable<BareChain['checkpoints']> = [];
  const checkpoints = statePath === undefined ? undefined : startChainCheckpoints({
    url: anvil.url, statePath, minIntervalMs: loadConfig({}).chainCheckpointSeconds * 1000,
    onCheckpoint: (c) => taken.push({ ...c, ms: Math.round(c.ms) }),
  });
  const client = createPublicClient({ transport: http(anvil.url) }) as PublicClient;
  const batchClient = createPublicClient({ transport: http(anvil.url, { batch: { batchSize: 1000 } }) }) as PublicClient;
  const stop = async () => {
    await checkpoints?.stop();
    await anvil.stop();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    const hash = await send(client, owner, undefined, encodeDeployData({ abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: ['VIXP', 'VIXP', owner, 0n] }));
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (!receipt.contractAddress) throw new Error('VIXP deployment failed');
    return { anvil, client, batchClient, token: receipt.contractAddress, chainId, ...(statePath && checkpoints && { statePath, checkpoints: taken, checkpoint: () => checkpoints.checkpoint(true) }), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** eth_sendTransaction from an unlocked development account: anvil signs. */
export function send(client: PublicClient, from: Address, to: Address | undefined, data: Hex): Promise<Hex> {
  return client.request({ method: 'eth_sendTransaction', params: [{ from, ...(to && { to }), data, gas: '0x2dc6c0' }] } as any) as Promise<Hex>;
}

export const transferData = (to: Address, amount: bigint) => encodeFunctionData({ abi: vixpTokenAbi, functionName: 'transfer', args: [to, amount] });
export const mintData = (to: Address, amount: bigint) => encodeFunctionData({ abi: vixpTokenAbi, functionName: 'mint', args: [to, amount] });

/** Until every one of `hashes` has a receipt (one batched request per poll); answers how many succeeded. */
export async function untilMined(chain: BareChain, hashes: Hex[]): Promise<number> {
  let pending = hashes;
  let succeeded = 0;
  while (pending.length > 0) {
    const receipts = await Promise.all(pending.map((hash) => chain.batchClient.getTransactionReceipt({ hash }).catch(() => undefined)));
    succeeded += receipts.filter((r) => r?.status === 'success').length;
    pending = pending.filter((_, i) => !receipts[i]);
    if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return succeeded;
}

/**
 * `count` fresh EOAs, each funded with ether and VIXP, each sending one ERC-20 transfer signed
 * beforehand; all are sent at once with viem, as fast as the node takes them, and counted until
 * mined. Answers transfers per second.
 */
export async function erc20Burst(chain: BareChain, count: number): Promise<{ transfers: number; succeeded: number; elapsedMs: number; perSecond: number }> {
  const accounts = Array.from({ length: count }, () => privateKeyToAccount(generatePrivateKey()));
  const minted: Hex[] = [];
  for (const account of accounts) {
    await chain.client.request({ method: 'anvil_setBalance', params: [account.address, '0x56bc75e2d63100000'] } as any);
    minted.push(await send(chain.client, owner, chain.token, mintData(account.address, 10n ** 18n)));
  }
  await untilMined(chain, minted);
  const block = await chain.client.getBlock();
  const maxFeePerGas = (block.baseFeePerGas ?? 1_000_000_000n) * 4n + 1_000_000_000n;
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  const signed = await Promise.all(accounts.map((account) => account.signTransaction({
    type: 'eip1559', chainId: chain.chainId, nonce: 0, to: chain.token, data: transferData(recipient, 1n),
    gas: 100_000n, maxFeePerGas, maxPriorityFeePerGas: 1_000_000_000n,
  })));
  const begin = performance.now();
  const hashes = await Promise.all(signed.map((serializedTransaction) => chain.client.sendRawTransaction({ serializedTransaction })));
  const succeeded = await untilMined(chain, hashes);
  const elapsedMs = performance.now() - begin;
  if (succeeded !== count) throw new Error(`bare anvil: ${succeeded} of ${count} transfers succeeded`);
  return { transfers: count, succeeded, elapsedMs, perSecond: count / (elapsedMs / 1000) };
}
