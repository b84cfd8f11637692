import { verifyCredential } from 'did-jwt-vc';
import { erc20Abi, getAddress, isAddress, isHash, parseEventLogs, parseUnits, type PublicClient } from 'viem';
import { isDomainError } from '#shared/errors.ts';
import { jwtOf } from '../did/jwt-credentials.ts';
import { receiptCredentialType, type ReceiptSubject } from './receipt-credential.ts';

type Resolver = Parameters<typeof verifyCredential>[1];

export interface VerifyReceiptDeps {
  /** A did:ethr resolver on our chain's DID registry (ethr-did-resolver), nothing of our agent. */
  resolver: Resolver;
  /** The platform's system issuer DIDs (`GET /v2/did/issuers`). */
  systemIssuers: string[];
  /** The chain of a network the receipt names, or undefined for a network we do not know. */
  chainOf: (network: string) => { chainId: number; client: PublicClient } | undefined;
}

/** One check of `vixpay receipt verify`, named as docs/receipts.md lists them. */
export interface ReceiptCheck {
  check: 'signature' | 'issuer' | 'network' | 'transaction' | 'transfer';
  ok: boolean;
  detail: string;
}

export interface ReceiptVerification {
  verified: boolean;
  checks: ReceiptCheck[];
  subject?: ReceiptSubject;
}

/**
 * Verifies a receipt end to end: its JWT signature by its issuer's key as our chain's DID registry
 * resolves it (did-jwt-vc), that the issuer is a system issuer of this platform, and that the
 * transaction it names succeeded on that network and carries the stated ERC-20 Transfer (token,
 * from, to, amount). Stops at the first failed check; never throws for a bad receipt, throws
 * `chain.unavailable` when the chain's node did not answer the issuer's resolution.
 */
export async function verifyReceipt(deps: VerifyReceiptDeps, document: unknown): Promise<ReceiptVerification> {
  const checks: ReceiptCheck[] = [];
  const fail = (check: ReceiptCheck['check'], detail: string, subject?: ReceiptSubject): ReceiptVerification => {
    checks.push({ check, ok: false, detail });
    return { verified: false, checks, ...(subject && { subject }) };
  };
  const jwt = jwtOf(document);
  if (!jwt) return fail('signature', 'not a credential: expected its JWT or its JSON with proof.jwt');
  let verified: Awaited<ReturnType<typeof verifyCredential>>;
  try {
    verified = await verifyCredential(jwt, deps.resolver);
  } catch (error) {
    // The chain's node did not answer the issuer's resolution: not verified either way, ask again later.
    if (isDomainError(error) && error.code === 'chain.unavailable') throw error;
    return fail('signature', error instanceof Error ? error.message : String(error));
  }
  const credential = verified.verifiableCredential;
  const types = Array.isArray(credential.type) ? credential.type : [credential.type];
  if (!receiptCredentialType.every((type) => types.includes(type))) return fail('signature', `not a receipt: type ${types.join(', ')}`);
  const subject = credential.credentialSubject as unknown as ReceiptSubject;
  checks.push({ check: 'signature', ok: true, detail: `signed by ${verified.issuer}` });

  if (!deps.systemIssuers.includes(verified.issuer)) return fail('issuer', `${verified.issuer} is not an issuer of this platform`, subject);
  checks.push({ check: 'issuer', ok: true, detail: `${verified.issuer} is a system issuer` });

  const chain = deps.chainOf(subject.network);
  if (!chain) return fail('network', `unknown network ${String(subject.network)}`, subject);
  if (chain.chainId !== subject.chainId) return fail('network', `${subject.network} is chain ${chain.chainId}, the receipt says ${subject.chainId}`, subject);
  checks.push({ check: 'network', ok: true, detail: `${subject.network} (chain ${chain.chainId})` });

  if (!isHash(subject.transactionId)) return fail('transaction', 'transactionId is not a transaction hash', subject);
  const receipt = await chain.client.getTransactionReceipt({ hash: subject.transactionId }).catch(() => undefined);
  if (!receipt) return fail('transaction', `${subject.transactionId} is not on ${subject.network}`, subject);
  if (receipt.status !== 'success') return fail('transaction', `${subject.transactionId} reverted`, subject);
  checks.push({ check: 'transaction', ok: true, detail: `mined in block ${receipt.blockNumber}` });

  if (![subject.tokenContract, subject.from, subject.to].every((address) => isAddress(address, { strict: false }))) {
    return fail('transfer', 'tokenContract, from and to must be addresses', subject);
  }
  let value: bigint;
  try {
    const decimals = await chain.client.readContract({ address: getAddress(subject.tokenContract), abi: erc20Abi, functionName: 'decimals' });
    value = parseUnits(subject.amount, decimals);
  } catch {
    return fail('transfer', `${subject.tokenContract} is not a token on ${subject.network}, or amount is not an amount`, subject);
  }
  const token = getAddress(subject.tokenContract);
  const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs, strict: true });
  const stated = transfers.find((log) => getAddress(log.address) === token && getAddress(log.args.from) === getAddress(subject.from)
    && getAddress(log.args.to) === getAddress(subject.to) && log.args.value === value);
  if (!stated) return fail('transfer', `the transaction carries no transfer of ${subject.amount} ${subject.token} from ${subject.from} to ${subject.to}`, subject);
  checks.push({ check: 'transfer', ok: true, detail: `${subject.amount} ${subject.token} from ${subject.from} to ${subject.to}` });
  return { verified: true, checks, subject };
}
