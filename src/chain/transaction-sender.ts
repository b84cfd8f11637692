import { keccak256, type Address, type Hex, type LocalAccount, type SignedAuthorization } from 'viem';
import type { ChainJournal, JournalEntry } from './chain-journal.ts';
import type { ChainClients } from './chain-clients.ts';
import type { Fees } from './replacement-fees.ts';
import type { RelayRequest } from './relay-types.ts';
import type { Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import { errorSummary } from '#shared/redact.ts';

/** A transaction signed and journaled: what recovery sends again if this process stops here. */
export interface JournaledTransaction {
  id: string;
  rawTx: Hex;
  txHash: Hex;
  /** The authorizations it carries (those still reserved when it was journaled). */
  included: readonly string[];
}

/** The call a transaction makes, for the authorizations it carries. */
export interface TransactionCall {
  /** Omitted for a contract deployment. */
  to: Address | undefined;
  data: Hex;
  gas: bigint;
  /** Wei sent with the call (a lane's funding); 0 when omitted. */
  value?: bigint;
  /** EIP-7702 delegations it carries (account settlements, src/chain/account-settlement.ts): a type-4 transaction when not empty. */
  authorizationList?: readonly SignedAuthorization[];
}

export interface TransactionSender {
  /**
   * The network's fees for the next transaction of `account`, whose stored next nonce is first
   * brought up to the chain's pending nonce (once per process and lane). Throws `chain.unavailable`.
   */
  fees(network: NetworkName, account: Address): Promise<Fees>;
  /**
   * Takes `account`'s next nonce from the journal, signs `call` with it (EIP-1559, fee cap twice the
   * estimate) and journals the signed bytes, in one database transaction; nothing is broadcast.
   * `released` when the entry names authorizations and none is reserved any more.
   */
  journal(network: NetworkName, account: LocalAccount, entry: Omit<JournalEntry, 'network' | 'relayer'>, fees: Fees,
    call: (included: readonly string[]) => TransactionCall): Promise<JournaledTransaction | 'released'>;
  /** Sends journaled bytes; a node that refuses them is reported by the receipt wait that follows. */
  broadcast(network: NetworkName, rawTx: Hex): Promise<void>;
  /**
   * The platform account's transaction: fees, gas estimate, journal, broadcast. Throws
   * (`chain.transaction_failed` when the node says it would revert, `chain.unavailable`) only before
   * anything is journaled.
   */
  send(network: NetworkName, request: RelayRequest): Promise<JournaledTransaction>;
  /** Reads `account`'s pending nonce on chain again (after recovery sent or lost transactions). */
  resyncNonce(network: NetworkName, account: Address): Promise<void>;
}

export interface TransactionSenderDeps {
  journal: ChainJournal;
  chains: ChainClients;
  /** The account of `send` (lane 0: deployments, mints). */
  platform: LocalAccount;
  clock: Clock;
  logger: Logger;
}

/**
 * Nonces, fees, signing, journaling and broadcast of the relayer's transactions. Every transaction is
 * journaled (nonce, signed bytes, hash) before it is broadcast: a crash between the two leaves bytes
 * recovery sends as they are, so the nonce is never skipped and nothing is sent twice.
 */
export function createTransactionSender(deps: TransactionSenderDeps): TransactionSender {
  const { journal, chains, clock, logger, platform } = deps;
  const synced = new Set<string>();

  /** The stored next nonce never trails the chain's pending nonce (first use, or another sender). */
  async function syncNonce(network: NetworkName, address: Address): Promise<void> {
    const key = `${network}:${address}`;
    if (synced.has(key)) return;
    const onChain = await chains[network].client.getTransactionCount({ address, blockTag: 'pending' });
    await journal.syncNonce(network, address, onChain);
    synced.add(key);
  }

  async function fees(network: NetworkName, account: Address): Promise<Fees> {
    try {
      await syncNonce(network, account);
      return await chains[network].client.estimateFeesPerGas();
    } catch (cause) {
      throw new DomainError('chain.unavailable', `network ${network} does not answer (${errorSummary(cause)})`);
    }
  }

  async function journalSigned(network: NetworkName, account: LocalAccount, entry: Omit<JournalEntry, 'network' | 'relayer'>, estimate: Fees,
    call: (included: readonly string[]) => TransactionCall): Promise<JournaledTransaction | 'released'> {
    const { chainId } = chains[network];
    const journaled = await journal.journal({ ...entry, network, relayer: account.address }, clock(), async (nonce, included) => {
      const { to, data, gas, value = 0n, authorizationList = [] } = call(included);
      const common = { chainId, nonce, data, value, gas, maxFeePerGas: estimate.maxFeePerGas * 2n, maxPriorityFeePerGas: estimate.maxPriorityFeePerGas };
      const rawTx = authorizationList.length > 0 && to
        ? await account.signTransaction({ ...common, type: 'eip7702', to, authorizationList: [...authorizationList] })
        : await account.signTransaction({ ...common, type: 'eip1559', to: to ?? null });
      return { rawTx, txHash: keccak256(rawTx) };
    });
    if (journaled === 'released') return journaled;
    return { id: journaled.id, rawTx: journaled.rawTx as Hex, txHash: journaled.txHash as Hex, included: journaled.included };
  }

  async function broadcast(network: NetworkName, rawTx: Hex): Promise<void> {
    try {
      await chains[network].client.sendRawTransaction({ serializedTransaction: rawTx });
    } catch (cause) {
      // "already known" / "nonce too low" after a crash mean the node has (or had) it: the
      // receipt wait decides. Anything else is reported by that wait timing out, and stays journaled.
      // The node's error quotes the signed transaction: log only a summary.
      logger.warn({ network, reason: errorSummary(cause) }, 'broadcast failed; waiting for a receipt anyway');
    }
  }

  return {
    fees,
    journal: journalSigned,
    broadcast,

    async send(network, request) {
      const estimate = await fees(network, platform.address);
      let gas: bigint;
      try {
        gas = await chains[network].client.estimateGas({ account: platform.address, to: request.to, data: request.data, value: request.value });
      } catch (cause) {
        // The node's error quotes the calldata, which may carry a signature: keep only a summary,
        // never the error itself, so no log line or reply can carry it.
        throw new DomainError('chain.transaction_failed', `the transaction would revert (${errorSummary(cause)})`);
      }
      const journaled = await journalSigned(network, platform, { intent: request.intent }, estimate,
        () => ({ to: request.to, data: request.data, gas: (gas * 12n) / 10n, value: request.value }));
      // Stryker disable next-line StringLiteral: unreachable, an entry naming no authorizations is never released (the message is never seen)
      if (journaled === 'released') throw new Error('a transaction without authorizations cannot be released');
      // Its receipt is waited for by the caller: only settlement batches, which the schedule holds,
      // have their blocks judged (block-schedule.ts).
      chains[network].blocks.sent(Date.now());
      await broadcast(network, journaled.rawTx);
      return journaled;
    },

    async resyncNonce(network, account) {
      synced.delete(`${network}:${account}`);
      await syncNonce(network, account);
    },
  };
}
