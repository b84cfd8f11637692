import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { foundry } from 'viem/chains';
import { mnemonicToAccount } from 'viem/accounts';
import type { Hex, LocalAccount, PublicClient, TransactionReceipt } from 'viem';
import { startAnvil, type AnvilProcess } from '../../src/chain/anvil-process.ts';
import { createChainClients, type ChainClients } from '../../src/chain/chain-clients.ts';
import type { ChainEndpoint } from '../../src/chain/chain-supervisor.ts';
import type { ChainJournal } from '../../src/chain/chain-journal.ts';
import { openStore } from '../../src/store/db.ts';
import { createChainJournal } from '../../src/store/chain-journal-repository.ts';
import { networkNames, type NetworkName } from '../../src/shared/networks.ts';
import { waitFor } from './wait-for.ts';

/** One of anvil's funded dev accounts (the test mnemonic), by index. */
export const devAccount = (addressIndex: number): LocalAccount =>
  mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex });

export interface ChainParts {
  anvil: AnvilProcess;
  /** Every network on the one anvil. */
  chains: ChainClients;
  /** The relayer's journal in a fresh SQLite store. */
  journal: ChainJournal;
  close(): Promise<void>;
}

/**
 * What the relayer's parts stand on, for their unit tests: a real anvil (every network on it,
 * `managed` as asked: a chain we run or a node we do not; its heads pushed when asked), and the
 * journal in a real SQLite store.
 */
export async function startChainParts(options: { managed: boolean; pollMs?: number; pushedHeads?: boolean }): Promise<ChainParts> {
  const anvil = await startAnvil({ chainId: foundry.id });
  // `pushedHeads`: a node we do not run, with its WebSocket (`newHeads`) given, as an operator's WS_URL_<NETWORK>.
  const ws = options.pushedHeads ? { wsUrl: anvil.url.replace(/^http/, 'ws') } : {};
  const endpoints = Object.fromEntries(networkNames.map((network) => [network, { network, url: anvil.url, managed: options.managed, ...ws }])) as Record<NetworkName, ChainEndpoint>;
  const chains = await createChainClients(endpoints, options.pollMs ?? 20);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-chain-parts-'));
  const store = await openStore({ dataDir });
  return {
    anvil, chains, journal: createChainJournal(store.db, randomUUID),
    async close() {
      for (const network of networkNames) chains[network].receipts.close();
      await store.close();
      await anvil.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The receipt of `hash`, asked for every 20 ms until the node has it. Not viem's
 * waitForTransactionReceipt: that asks again only when it sees a new block number, and after an
 * `evm_revert` the block that mines the transaction can carry a number it has already seen (the one
 * mined before the revert), so a receipt not ready at its first look was waited for until its timeout.
 */
export async function receiptOf(client: Pick<PublicClient, 'getTransactionReceipt'>, hash: Hex): Promise<TransactionReceipt> {
  return waitFor(() => client.getTransactionReceipt({ hash }).catch(() => undefined), { timeoutMs: 60_000, intervalMs: 20, message: `the receipt of ${hash}` });
}
