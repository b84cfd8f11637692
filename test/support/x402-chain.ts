import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createTestClient, createWalletClient, getAddress, http, parseUnits, zeroAddress, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { vixpTokenAbi, vixpTokenBytecode } from '../../src/gen/contracts/vixp-token.ts';
import { vixpSettlementAbi, vixpSettlementBytecode } from '../../src/gen/contracts/vixp-settlement.ts';
import { vixpName, vixpSymbol, type PlatformContractsByNetwork } from '../../src/chain/platform-contracts.ts';
import { createRelayer } from '../../src/chain/relayer.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { createAuthorizationRepository } from '../../src/store/authorization-repository.ts';
import { createSettlementTokenRepository } from '../../src/store/settlement-token-repository.ts';
import { createX402SettlementRepository } from '../../src/store/x402-settlement-repository.ts';
import { createFacilitatorKeyRepository } from '../../src/store/facilitator-key-repository.ts';
import { createChainJournal } from '../../src/store/chain-journal-repository.ts';
import type { Logger } from '../../src/shared/logger.ts';
import { networkNames, type NetworkName } from '../../src/shared/networks.ts';
import type { X402Deps } from '../../src/x402/x402-deps.ts';
import { devAccount, startChainParts, type ChainParts } from './chain-parts.ts';

/**
 * The x402 facilitator's world on real parts, for the tests of how a settlement is accepted and
 * carried (src/x402/*.test.ts): a managed anvil with VIXP and the settlement contract deployed, the
 * platform's relayer (journal, batches of 10 in 10 ms, receipts) on lane devAccount(2), and the real
 * authorization, settlement, facilitator-key and settlement-token repositories on SQLite.
 */
export interface X402Chain {
  parts: ChainParts;
  store: Store;
  token: Address;
  journal: ReturnType<typeof createChainJournal>;
  deps: X402Deps;
  balanceOf(address: Address): Promise<bigint>;
  /** The token owner (devAccount(0)) calls `functionName`; its transaction succeeded. */
  send(functionName: 'transfer' | 'transferWithAuthorization', args: readonly unknown[]): Promise<Hex>;
  /** A fresh payer holding `balance` VIXP base units. */
  payer(balance?: bigint): Promise<LocalAccount>;
  close(): Promise<void>;
}

export const x402ChainNetwork: NetworkName = 'ethereum';
const owner = devAccount(0);

export async function startX402Chain(options: { logger: Logger; clock: () => number; onOutcome?: X402Deps['onOutcome'] }): Promise<X402Chain> {
  const parts = await startChainParts({ managed: true });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-x402-'));
  const store = await openStore({ dataDir });
  const client = parts.chains[x402ChainNetwork].client;
  const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(parts.anvil.url) });
  const deploy = async (abi: typeof vixpTokenAbi | typeof vixpSettlementAbi, bytecode: Hex, args?: readonly unknown[]) => {
    const hash = await wallet.deployContract({ abi, bytecode, args } as never);
    return getAddress((await client.waitForTransactionReceipt({ hash })).contractAddress!);
  };
  const token = await deploy(vixpTokenAbi, vixpTokenBytecode, [vixpName, vixpSymbol, owner.address, parseUnits('1000000', 18)]);
  const settlement = await deploy(vixpSettlementAbi, vixpSettlementBytecode);
  const contracts = Object.fromEntries(networkNames.map((n) => [n, { vixpToken: token, settlement, didRegistry: zeroAddress }])) as unknown as PlatformContractsByNetwork;
  const journal = createChainJournal(store.db, randomUUID);
  const relayer = createRelayer({ journal, chains: parts.chains, lanes: [devAccount(2)], clock: Date.now, logger: options.logger, batch: { windowMs: 10, maxItems: 10 } });
  const deps: X402Deps = {
    chains: parts.chains, contracts, relayer, clock: options.clock, logger: options.logger,
    keys: createFacilitatorKeyRepository(store.db),
    authorizations: createAuthorizationRepository(store.db, 'process'),
    settlements: createX402SettlementRepository(store.db),
    settlementTokens: createSettlementTokenRepository(store.db),
    ...(options.onOutcome && { onOutcome: options.onOutcome }),
  };
  const send = async (functionName: 'transfer' | 'transferWithAuthorization', args: readonly unknown[]) => {
    const hash = await wallet.writeContract({ address: token, abi: vixpTokenAbi, functionName, args } as never);
    assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
    return hash;
  };
  return {
    parts, store, token, journal, deps, send,
    balanceOf: (address) => client.readContract({ address: token, abi: vixpTokenAbi, functionName: 'balanceOf', args: [address] }),
    async payer(balance = 10_000n) {
      const account = privateKeyToAccount(generatePrivateKey());
      if (balance > 0n) await send('transfer', [account.address, balance]);
      return account;
    },
    async close() {
      await createTestClient({ mode: 'anvil', transport: http(parts.anvil.url) }).setAutomine(true).catch(() => undefined);
      await store.close();
      await parts.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
