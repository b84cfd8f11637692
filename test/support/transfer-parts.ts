import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  bytesToHex, createPublicClient, createWalletClient, getAddress, http, parseUnits, toHex, zeroAddress,
  type Address, type Hex, type LocalAccount, type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from '../../src/chain/anvil-process.ts';
import { createChainClients, type ChainClient, type ChainClients } from '../../src/chain/chain-clients.ts';
import type { ChainEndpoint } from '../../src/chain/chain-supervisor.ts';
import { createBlockSchedule } from '../../src/chain/block-schedule.ts';
import { createRelayer, type Relayer } from '../../src/chain/relayer.ts';
import { vixpDecimals, vixpName, vixpSymbol, type PlatformContractsByNetwork } from '../../src/chain/platform-contracts.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../../src/gen/contracts/vixp-token.ts';
import { vixpSettlementAbi, vixpSettlementBytecode } from '../../src/gen/contracts/vixp-settlement.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { createChainJournal } from '../../src/store/chain-journal-repository.ts';
import { createAuthorizationRepository } from '../../src/store/authorization-repository.ts';
import { createWalletRepository } from '../../src/store/wallet-repository.ts';
import { createKeyVault } from '../../src/shared/key-vault.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { networkNames, type NetworkName } from '../../src/shared/networks.ts';
import { sha256Hex } from '../../src/shared/hash.ts';
import { createDelegatedAccounts } from '../../src/wallet/delegated-accounts.ts';
import type { WalletDeps } from '../../src/wallet/wallet-deps.ts';
import { devAccount } from './chain-parts.ts';

/**
 * What the custodial wallet's transfer path stands on, for its unit tests (src/wallet/transfer*.test.ts,
 * resolve-authorization.test.ts: the StrykerJS `transfer` area): a real anvil (every network on it, a
 * chain we run) with the VIXP token and the settlement contract deployed, the real relayer over one
 * lane with its journal, and the wallet and authorization repositories in one fresh SQLite store (the
 * relayer's journal marks an authorization submitted in the same database), as the platform composes
 * them (src/compose/wallet.ts, chain.ts).
 */
export interface TransferParts {
  anvil: AnvilProcess;
  chains: ChainClients;
  store: Store;
  relayer: Relayer;
  deps: WalletDeps;
  /** The VIXP token (named as the platform's, so a holder's authorization is signed for it). */
  token: Address;
  settlement: Address;
  /** Funds the token's deployer holds: it pays the wallets a test makes. */
  treasury: LocalAccount;
  /** A custodial wallet stored as createAddress stores one (its key sealed with the vault), holding `funds` VIXP on chain. */
  newWallet(funds?: string): Promise<CustodialWallet>;
  /** VIXP on chain (base units). */
  balanceOf(address: Address): Promise<bigint>;
  /** The authorization row of `nonce` as stored, or undefined. */
  authorization(nonce: string): Promise<{ status: string; txHash: string | null; cancelTxHash: string | null } | undefined>;
  /** A relayer of its own lane (a fresh funded key), journaling into the same store. */
  relayerWith(options: { receiptTimeoutMs: number }): Relayer;
  /** Whether anvil mines each transaction as it comes (a test pauses it to hold transactions in the pool). */
  setAutomine(on: boolean): Promise<void>;
  dispose(): Promise<void>;
}

export interface CustodialWallet {
  address: Address;
  account: LocalAccount;
  secretKey: string;
}

export const network: NetworkName = 'ethereum';
export const vixp = (amount: string) => parseUnits(amount, vixpDecimals);

export async function openTransferParts(): Promise<TransferParts> {
  const anvil = await startAnvil({ chainId: foundry.id });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-transfer-'));
  let store: Store | undefined;
  let chains: ChainClients | undefined;
  const relayers: Relayer[] = [];
  const dispose = async () => {
    if (chains) for (const n of networkNames) chains[n].receipts.close();
    await store?.close();
    await anvil.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const endpoints = Object.fromEntries(networkNames.map((n) => [n, { network: n, url: anvil.url, managed: true }])) as Record<NetworkName, ChainEndpoint>;
    chains = await createChainClients(endpoints, 20);
    const opened = await openStore({ dataDir });
    store = opened;
    const journal = createChainJournal(opened.db, randomUUID);
    const logger = createLogger('silent');
    const { client } = chains[network];
    const treasury = devAccount(1);
    const wallet = createWalletClient({ account: treasury, chain: foundry, transport: http(anvil.url) });
    const mined = async (hash: Hex) => {
      const receipt = await client.waitForTransactionReceipt({ hash });
      if (receipt.status !== 'success') throw new Error(`${hash} reverted`);
      return receipt;
    };
    const token = getAddress((await mined(await wallet.deployContract({
      abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: [vixpName, vixpSymbol, treasury.address, parseUnits('1000000', vixpDecimals)],
    }))).contractAddress!);
    const settlement = getAddress((await mined(await wallet.deployContract({ abi: vixpSettlementAbi, bytecode: vixpSettlementBytecode }))).contractAddress!);
    const contracts = Object.fromEntries(networkNames.map((n) => [n, { vixpToken: token, settlement, didRegistry: zeroAddress }])) as unknown as PlatformContractsByNetwork;
    const relayerOf = (lane: LocalAccount, receiptTimeoutMs: number) => {
      const relayer = createRelayer({ journal, chains: chains!, lanes: [lane], clock: Date.now, logger, receiptTimeoutMs, batch: { windowMs: 20, maxItems: 100 } });
      relayers.push(relayer);
      return relayer;
    };
    const relayer = relayerOf(devAccount(0), 30_000);
    const vault = createKeyVault(randomBytes(32));
    const repo = createWalletRepository(opened.db);
    const deps: WalletDeps = {
      repo, vault, clock: Date.now, chains, relayer, contracts, tempKeyTtlMs: 300_000,
      authorizations: createAuthorizationRepository(opened.db, 'process'), authorizationTtlSeconds: 120,
      // These tests are the EIP-3009 path's (no account contract is deployed): a network without EIP-7702.
      eip7702: Object.fromEntries(networkNames.map((n) => [n, false])) as Record<NetworkName, boolean>, delegated: createDelegatedAccounts(),
    };
    return {
      anvil, chains, store: opened, relayer, deps, token, settlement, treasury,
      async newWallet(funds = '100') {
        const privateKey = randomBytes(32);
        const account = privateKeyToAccount(bytesToHex(privateKey));
        const secretKey = randomBytes(32).toString('hex');
        await repo.insertAccount({ address: account.address, privateKeyEnc: vault.encrypt(bytesToHex(privateKey)), secretKeyEnc: vault.encrypt(secretKey) }, Date.now());
        if (vixp(funds) > 0n) await mined(await wallet.writeContract({ address: token, abi: vixpTokenAbi, functionName: 'transfer', args: [account.address, vixp(funds)] }));
        return { address: account.address, account, secretKey };
      },
      balanceOf: (address) => client.readContract({ address: token, abi: vixpTokenAbi, functionName: 'balanceOf', args: [address] }),
      async authorization(nonce) {
        const row = await opened.db.selectFrom('authorizations').select(['status', 'tx_hash as txHash', 'cancel_tx_hash as cancelTxHash']).where('nonce', '=', nonce).executeTakeFirst();
        return row && { ...row };
      },
      relayerWith({ receiptTimeoutMs }) {
        const lane = privateKeyToAccount(bytesToHex(randomBytes(32)));
        void client.request({ method: 'anvil_setBalance' as never, params: [lane.address, toHex(10n ** 20n)] as never });
        return relayerOf(lane, receiptTimeoutMs);
      },
      async setAutomine(on) {
        await client.request({ method: 'evm_setAutomine' as never, params: [on] as never });
      },
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** hashKey of docs/interfaces.md#key-scheme: sha256hex(tempKey + "|" + secretKey). */
export const hashKeyOf = (tempKey: string, secretKey: string) => sha256Hex(`${tempKey}|${secretKey}`);

/**
 * A JSON-RPC node in front of `target` (the real anvil) that stops answering the methods in `down`
 * (the connection is dropped, as a node going away drops it); every other call reaches `target`.
 */
export interface FlakyNode {
  url: string;
  down: Set<string>;
  /** `chain` with its client through this node and no recent head learnt: every call of the wallet to it goes here. */
  chainClient(chain: ChainClient): ChainClient;
  close(): Promise<void>;
}

export async function startFlakyNode(target: string): Promise<FlakyNode> {
  const down = new Set<string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const body = JSON.parse(text) as { method?: string } | Array<{ method?: string }>;
        if ((Array.isArray(body) ? body : [body]).some((call) => down.has(String(call.method)))) {
          response.destroy();
          return;
        }
        const reply = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
        response.writeHead(200, { 'content-type': 'application/json' }).end(await reply.text());
      })().catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, down,
    chainClient(chain) {
      const client = createPublicClient({ chain: { ...foundry, id: chain.chainId }, transport: http(url, { retryCount: 0 }) }) as PublicClient;
      return { ...chain, client, blocks: createBlockSchedule() };
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
