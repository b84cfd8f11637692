import { randomBytes } from 'node:crypto';
import { getAddress, type Hex } from 'viem';
import { DomainError } from '../../src/shared/errors.ts';
import { formatTokenAmount, parseTokenAmount } from '../../src/shared/amount.ts';
import type { Store } from '../../src/store/db.ts';
import type { AuthorizationStatus } from '../../src/store/schema.ts';
import { createAuthorizationRepository, type AuthorizationRecord } from '../../src/store/authorization-repository.ts';
import type { TransferFromCustodyParameters } from '../../src/wallet/transfer-from-custody.ts';
import type { TransferOutcome } from '../../src/wallet/transfer-outcome.ts';
import type { WalletService } from '../../src/wallet/wallet-service.ts';
import { attemptTransfer, operationTransfer } from '../../src/wallet/operation-transfer.ts';
import { waitFor } from './wait-for.ts';

/**
 * The chain as the money domains' unit tests see it (src/pay, src/rewards, src/payments, each a
 * StrykerJS area: a real anvil and relayer would make each mutant's run take many seconds, and the
 * code under test only sees the wallet's answers). It stands in for the wallet's `transfer`,
 * `transferFromCustody`, `transferOutcome`, `attemptTransferOutcome`, `getBalance` and `getTokenInfo`:
 * it holds balances per token and address, records each transfer's authorization in the test's real
 * store the way the wallet does (reference, from, to, value, status, transaction), moves the balance
 * when the transfer executes and answers the outcome the test scripted; the outcome lookups read the
 * record through the real authorization repository, as the wallet's do (their on-chain resolution is
 * the wallet's own, proven on a real chain in the platform and fault tests).
 *
 * A transfer that would overdraw its account, or a reference transferred again, is a test error
 * (thrown, not answered): nothing the code under test may cause on a real chain.
 */

/** A refusal the stand-in can answer (each domain's tests name the ones they need). */
export type Refusal = 'wallet.insufficient_balance' | 'chain.transaction_failed' | 'wallet.unknown_address' | 'wallet.signature_invalid';

/** What the stand-in chain does with the next transfer; a transfer with none scripted settles. */
export type ScriptedTransfer<Code extends Refusal = Refusal> =
  /** Executed on chain: its authorization `used`, the balances moved. */
  | { kind: 'settled' }
  /** Sent and not settled: `submitted` with its transaction; with `sent: false`, interrupted before it was sent (no record). */
  | { kind: 'pending'; sent?: boolean }
  /** Refused with `code`, nothing moved; `chain.transaction_failed` leaves its authorization `canceled` with its transaction. */
  | { kind: 'refused'; code: Code }
  /** The authorization recorded (`status`), then no answer ever: the instance stopped mid-way. */
  | { kind: 'interrupted'; status: AuthorizationStatus }
  /** Throws (not a domain outcome): the wallet call itself failed. */
  | { kind: 'throws' }
  /** Nothing recorded until `release` resolves (a run slower than the staleness window), then settles as `settled` would. */
  | { kind: 'held'; release: Promise<void> };

export interface StandInToken { contractAddress: string; tokenSymbol: string; decimals: number }

/** A transfer as the chain took it: the user's own (`payment`, signed with a temp key) or a custodial one. */
export interface StandInTransfer { kind: 'payment' | 'custody'; reference: string; amount: string; from: string; to: string; contractAddress: string; tempKey?: string }

export interface TransferRecord { reference: string; status: string; tx_hash: string | null; from_address: string; to_address: string; value: string }

export type StandInWallet = Pick<WalletService, 'transfer' | 'transferFromCustody' | 'transferOutcome' | 'attemptTransferOutcome' | 'getBalance' | 'getTokenInfo'>;

export interface StandInChain<Script extends ScriptedTransfer = ScriptedTransfer> {
  /** The next transfers' behaviour, in order. */
  script: Script[];
  /** The custodial transfers asked for, in order, as asked. */
  calls: TransferFromCustodyParameters[];
  /** Every transfer (the user's and custodial ones), in order, in the token it moves. */
  transfers: StandInTransfer[];
  wallet: StandInWallet;
  /** Balance in base units of `address` in `token` (the platform token by default). */
  balanceOf(address: string, token?: string): bigint;
  mint(address: string, units: bigint, token?: string): void;
  /** What a relayer later does: the open authorization `reference` executes (balances move) or ends. */
  settle(reference: string, status: 'used' | 'canceled' | 'expired'): Promise<void>;
  /** Sets the record of a transfer (by its reference) as a test scripts it, from any status (one becoming `used` moves the balance). */
  update(reference: string, status: AuthorizationStatus, txHash?: string | null): Promise<void>;
  /** The transaction of the transfer with this reference, as recorded (it must have one). */
  txHashOf(reference: string): Promise<Hex>;
  /** Resolves once a transfer whose reference starts with `prefix` is recorded (an operation left interrupted has reached its transfer). */
  untilRecorded(prefix: string): Promise<void>;
  /** The records of every transfer, oldest first. */
  records(): Promise<TransferRecord[]>;
}

export const randomHash = (): Hex => `0x${randomBytes(32).toString('hex')}`;
export const randomAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`);

export interface StandInChainOptions {
  store: Store;
  network: string;
  /** The tokens the wallet knows; the first is the platform token (a transfer naming no contract moves it). */
  tokens: readonly StandInToken[];
  /** The time of the records (ms since the epoch). */
  clock: () => number;
}

/** The wallet's answer for an operation's transfer from its record, as `resolveAuthorization` answers it. */
function outcomeOfRecord(record: AuthorizationRecord | undefined) {
  if (!record) return { status: 'void' as const };
  switch (record.status) {
    case 'used': return { status: 'used' as const, txHash: record.txHash as Hex };
    case 'reserved': case 'submitted': return { status: 'open' as const };
    default: return { status: record.status };
  }
}

export function createStandInChain<Script extends ScriptedTransfer>(options: StandInChainOptions): StandInChain<Script> {
  const { store: { db }, network, tokens, clock } = options;
  const platformToken = tokens[0]!;
  const authorizations = createAuthorizationRepository(db);
  const balances = new Map<string, bigint>();
  const key = (address: string, token: string) => `${token}:${address}`.toLowerCase();
  const script: Script[] = [];
  const calls: TransferFromCustodyParameters[] = [];
  const transfers: StandInTransfer[] = [];
  /** The references of the transfers recorded (one operation, one authorization, as the wallet's nonce is the reference's). */
  const recorded = new Set<string>();

  const tokenOf = (contractAddress?: string) => {
    const token = contractAddress === undefined ? platformToken : tokens.find((t) => t.contractAddress.toLowerCase() === contractAddress.toLowerCase());
    if (!token) throw new DomainError('wallet.unknown_token', `no token ${contractAddress}`);
    return token;
  };
  const balanceOf = (address: string, token = platformToken.contractAddress) => balances.get(key(address, token)) ?? 0n;
  const move = (from: string, to: string, units: bigint, token: string) => {
    if (balanceOf(from, token) < units) throw new Error(`stand-in chain: the transfer would overdraw ${from}`);
    balances.set(key(from, token), balanceOf(from, token) - units);
    balances.set(key(to, token), balanceOf(to, token) + units);
  };
  const recordsOf = async (reference: string) => {
    const rows = await db.selectFrom('authorizations').selectAll().where('network', '=', network).where('reference', '=', reference).execute();
    if (rows.length === 0) throw new Error(`stand-in chain: no transfer ${reference}`);
    return rows;
  };
  const record = async (params: TransferFromCustodyParameters, token: StandInToken, status: AuthorizationStatus, txHash: string | null) => {
    const units = parseTokenAmount(params.amount, token.decimals);
    const contractAddress = params.contractAddress ?? token.contractAddress;
    if (status === 'used') move(params.fromAddress, params.toAddress, units, contractAddress);
    recorded.add(params.reference ?? '');
    await db.insertInto('authorizations').values({
      nonce: randomHash(), network, reference: params.reference ?? '', contract_address: contractAddress,
      // Lower case, so that the lookups under test must compare addresses case-blind, as the wallet's records require.
      from_address: params.fromAddress.toLowerCase(), to_address: params.toAddress.toLowerCase(),
      value: units.toString(), valid_before: 1, from_block: 0, status, tx_hash: txHash, cancel_tx_hash: null,
      created_at: clock(), updated_at: clock(), chain_nonce: null,
    }).execute();
    return units;
  };

  const send = async (kind: StandInTransfer['kind'], params: TransferFromCustodyParameters & { tempKey?: string }): Promise<TransferOutcome> => {
    if (kind === 'custody') calls.push(params);
    const token = tokenOf(params.contractAddress);
    const reference = params.reference ?? '';
    transfers.push({
      kind, reference, amount: params.amount, from: params.fromAddress, to: params.toAddress, contractAddress: token.contractAddress,
      ...(params.tempKey && { tempKey: params.tempKey }),
    });
    if (recorded.has(reference)) throw new Error(`stand-in chain: reference ${reference} transferred again`);
    const next: ScriptedTransfer = script.shift() ?? { kind: 'settled' };
    if (next.kind === 'held') await next.release;
    // Taken meanwhile by a lookup that voided it (operation-transfer.ts): refused, as the wallet's reservation is.
    if (await authorizations.findByReference(network, reference)) {
      return { status: 'refused', error: new DomainError('request.invalid', 'this operation already has a transfer authorization') };
    }
    const txHash = randomHash();
    switch (next.kind) {
      case 'held': case 'settled': {
        const units = await record(params, token, 'used', txHash);
        return { status: 'settled', transactionId: txHash, amountRaw: units.toString(), contractAddress: getAddress(token.contractAddress) };
      }
      case 'pending':
        if (next.sent === false) return { status: 'pending', error: new DomainError('internal', 'the transfer was interrupted') };
        await record(params, token, 'submitted', txHash);
        return { status: 'pending', transactionId: txHash, error: new DomainError('chain.outcome_pending', 'sent, not settled') };
      case 'refused':
        if (next.code === 'chain.transaction_failed') await record(params, token, 'canceled', txHash);
        return { status: 'refused', error: new DomainError(next.code, `refused: ${next.code}`) };
      case 'interrupted':
        await record(params, token, next.status, next.status === 'reserved' ? null : txHash);
        return new Promise<never>(() => {});
      case 'throws':
        throw new Error('the wallet call failed');
    }
  };

  const chain: StandInChain<Script> = {
    script, calls, transfers,
    wallet: {
      transfer: async (_network, params) => send('payment', params),
      transferFromCustody: async (_network, params) => send('custody', params),
      transferOutcome: async (_network, reference) => outcomeOfRecord(await operationTransfer(authorizations, network, reference, clock())),
      attemptTransferOutcome: async (_network, attempt) => outcomeOfRecord(await attemptTransfer(authorizations, network, attempt, clock())),
      getBalance: async (_network, params) => {
        const token = tokenOf(params.contractAddress);
        const raw = balanceOf(params.address, token.contractAddress);
        return { balance: formatTokenAmount(raw, token.decimals), balanceRaw: raw.toString(), tokenSymbol: token.tokenSymbol, contractAddress: token.contractAddress };
      },
      getTokenInfo: async (tokenNetwork, params) => {
        let token = tokenOf(params.contractAddress);
        if (params.tokenSymbol !== undefined && params.tokenSymbol !== token.tokenSymbol) {
          const named = tokens.find((t) => t.tokenSymbol === params.tokenSymbol);
          if (!named) throw new DomainError('wallet.unknown_token', `no token ${params.tokenSymbol}`);
          token = named;
        }
        return { ...token, contractAddress: getAddress(token.contractAddress), network: tokenNetwork, chainId: 31337 };
      },
    },
    balanceOf,
    mint(address, units, token = platformToken.contractAddress) { balances.set(key(address, token), balanceOf(address, token) + units); },
    async settle(reference, status) {
      const open = (await recordsOf(reference)).some((row) => row.status === 'reserved' || row.status === 'submitted');
      if (!open) throw new Error(`stand-in chain: no open authorization ${reference}`);
      await chain.update(reference, status);
    },
    async update(reference, status, txHash) {
      for (const row of await recordsOf(reference)) {
        if (status === 'used' && row.status !== 'used') move(row.from_address, row.to_address, BigInt(row.value), row.contract_address);
      }
      await db.updateTable('authorizations').set({ status, ...(txHash !== undefined && { tx_hash: txHash }) })
        .where('network', '=', network).where('reference', '=', reference).execute();
    },
    async txHashOf(reference) {
      const [row] = await recordsOf(reference);
      if (!row?.tx_hash) throw new Error(`stand-in chain: the transfer ${reference} has no transaction`);
      return row.tx_hash as Hex;
    },
    async untilRecorded(prefix) {
      await waitFor(async () => (await chain.records()).some((r) => r.reference.startsWith(prefix)),
        { timeoutMs: 10_000, intervalMs: 5, message: `a transfer ${prefix}… is recorded` });
    },
    async records() {
      return db.selectFrom('authorizations').select(['reference', 'status', 'tx_hash', 'from_address', 'to_address', 'value'])
        .orderBy('created_at').orderBy('reference').execute();
    },
  };
  return chain;
}
