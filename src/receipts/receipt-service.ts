import { randomUUID } from 'node:crypto';
import { normalizeCredential } from 'did-jwt-vc';
import { DomainError } from '#shared/errors.ts';
import type { Clock } from '#shared/clock.ts';
import type { DidAgent } from '../did/did-agent.ts';
import { issueCredential, jwtOf, type JsonObject, type SigningIdentity } from '../did/jwt-credentials.ts';
import type { ReceiptRecord, ReceiptRepository, ReceiptSource } from '../store/receipt-repository.ts';
import { receiptCredentialType, receiptSubject } from './receipt-credential.ts';

export interface ReceiptServiceDeps {
  receipts: ReceiptRepository;
  agent: DidAgent;
  /** The system issuer DID and its key (src/compose/did.ts: the first `issuer` system DID). */
  issuer: () => Promise<SigningIdentity>;
  tokenDecimals: (network: string, contractAddress: string) => Promise<number>;
  chainIdOf: (network: string) => number;
  clock: Clock;
  timeZone: string;
}

/** A store's receipts of one payment: the approval first, then each completed refund. */
export interface PaymentReceipts {
  tid: string;
  tranNo: string;
  receipts: JsonObject[];
}

export interface ReceiptService {
  /** Store `tid`'s receipts of payment `tranNo`; `request.not_found` until it is approved. */
  paymentReceipts(tid: string, tranNo: string): Promise<PaymentReceipts>;
  /** Store `tid`'s receipt of the claim of reward `rewardId`; `request.not_found` until claimed. */
  rewardClaimReceipt(tid: string, rewardId: string): Promise<JsonObject>;
  /**
   * The receipt of the x402 payment `id` (its network, token, payer and nonce: X402SettlementRecord.id), as issued at its settlement;
   * undefined before. Whose it is (the facilitator key's store) is for the caller to check.
   */
  x402Receipt(id: string): Promise<JsonObject | undefined>;
  /** Issues the receipt of the x402 payment `id` once it is settled (nothing before; kept once issued). */
  issueX402Receipt(id: string): Promise<void>;
  /** Ids of x402 payments accepted since `since` (epoch ms) and settled that have no receipt yet, oldest first. */
  x402SettledWithoutReceipt(since: number, limit: number): Promise<string[]>;
  /** The receipts of `userAddress`, newest first. */
  userReceipts(userAddress: string, limit: number): Promise<JsonObject[]>;
}

/** Receipts are listed at most this many at a time. */
export const maxReceiptsListed = 100;

/**
 * Receipts of approvals, refunds and reward claims are issued the first time they are read, never on
 * the payment path: a payment, refund or claim is final before anyone asks for its receipt, and the
 * receipt is kept once issued. Of two concurrent first reads, one insert wins the (kind, source) key
 * and both answer its credential. An x402 payment's receipt is issued when its settlement is
 * recorded settled (the facilitator calls `issueX402Receipt`), and reads only answer it.
 */
export function createReceiptService(deps: ReceiptServiceDeps): ReceiptService {
  const issue = async (source: ReceiptSource): Promise<ReceiptRecord> => {
    const existing = await deps.receipts.findReceipt(source.kind, source.sourceId);
    if (existing) return existing;
    const issuer = await deps.issuer();
    const decimals = await deps.tokenDecimals(source.network, source.contractAddress);
    const id = randomUUID();
    const issuedAt = deps.clock();
    const credential = await issueCredential(deps.agent, {
      issuer, type: receiptCredentialType, issuedAt: new Date(issuedAt),
      subject: { ...receiptSubject(source, { decimals }, deps.chainIdOf(source.network), deps.timeZone) },
    });
    const jwt = jwtOf(credential);
    if (!jwt) throw new Error('issued credential without proof.jwt');
    return deps.receipts.insertReceipt({
      id, kind: source.kind, sourceId: source.sourceId, tid: source.tid, reference: source.reference, userAddress: source.userAddress,
      transactionId: source.transactionId, issuer: issuer.did, credentialJwt: jwt, issuedAt,
    });
  };
  const credentialOf = (receipt: ReceiptRecord) => normalizeCredential(receipt.credentialJwt) as unknown as JsonObject;
  const issueAll = async (sources: ReceiptSource[]) => {
    const receipts: ReceiptRecord[] = [];
    for (const source of sources) {
      // An x402 receipt is issued at settlement: listed once it exists, never issued by the list.
      const receipt = source.kind === 'x402' ? await deps.receipts.findReceipt('x402', source.sourceId) : await issue(source);
      if (receipt) receipts.push(receipt);
    }
    return receipts.map(credentialOf);
  };

  return {
    async paymentReceipts(tid, tranNo) {
      const sources = await deps.receipts.sourcesOfPayment(tid, tranNo);
      if (sources.length === 0) throw new DomainError('request.not_found', `no approved payment of this store with tran_no ${tranNo.slice(0, 128)}`);
      return { tid, tranNo, receipts: await issueAll(sources) };
    },
    async rewardClaimReceipt(tid, rewardId) {
      const source = await deps.receipts.sourceOfRewardClaim(tid, rewardId);
      if (!source) throw new DomainError('request.not_found', `no claimed reward of this store with reward_id ${rewardId.slice(0, 128)}`);
      return credentialOf(await issue(source));
    },
    async x402Receipt(id) {
      const receipt = await deps.receipts.findReceipt('x402', id.toLowerCase());
      return receipt && credentialOf(receipt);
    },
    async issueX402Receipt(id) {
      const source = await deps.receipts.sourceOfX402(id);
      if (source) await issue(source);
    },
    x402SettledWithoutReceipt: (since, limit) => deps.receipts.x402WithoutReceipt(since, limit),
    async userReceipts(userAddress, limit) {
      return issueAll(await deps.receipts.sourcesOfUser(userAddress, Math.min(Math.max(limit, 1), maxReceiptsListed)));
    },
  };
}
