import {
  BaseError, decodeAbiParameters, decodeErrorResult, encodeFunctionData, getAddress, hexToString, HttpRequestError, parseAbi, parseSignature,
  TimeoutError, type Address, type Hex, type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DomainError } from '#shared/errors.ts';
import { tokenProbeAbi, tokenProbeCode } from '../gen/contracts/token-probe.ts';

/**
 * What `vixpay token allow` learns of a contract before it settles payments (docs/decisions/tokens.md
 * "Which tokens the platform accepts"): that it is an ERC-20, its symbol and decimals, whether it has
 * EIP-3009 (and under which EIP-712 domain), and that a transfer moves exactly the amount, tried in an
 * `eth_call` through TokenProbe set on a holder's address. Nothing is sent.
 */
export interface TokenInspection {
  contractAddress: Address;
  symbol: string;
  name: string;
  decimals: number;
  totalSupply: bigint;
  /** The account whose tokens the trial transfers moved. */
  holder: Address;
  /** The EIP-712 domain its `transferWithAuthorization(v, r, s)` accepted; null: no EIP-3009. */
  eip3009: { name: string; version: string } | null;
  /** How the platform moves it: EIP-3009, or the account contract through EIP-7702. */
  transferPath: 'eip3009' | 'account';
}

const erc20Abi = parseAbi([
  'function symbol() view returns (string)', 'function name() view returns (string)', 'function decimals() view returns (uint256)',
  'function totalSupply() view returns (uint256)', 'function balanceOf(address) view returns (uint256)',
  'function version() view returns (string)',
  'function eip712Domain() view returns (bytes1, string, string, uint256, address, bytes32, uint256[])',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/** Receives the trial transfers; an address no one holds a key of. */
export const trialPayee: Address = '0x00000000000000000000000000000000007e57ed';
/** Answers its own address (ADDRESS, MSTORE, RETURN): set on a throwaway address for the EIP-7702 trial. */
const selfAddressCode: Hex = '0x3060005260206000f3';
const delegateTarget: Address = '0x0000000000000000000000000000000000007702';
/** How far back (blocks) the Transfer logs are read for a holder when none is named. */
export const holderLookbackBlocks = 50_000n;
const logWindow = 5_000n;

const refuse = (code: ConstructorParameters<typeof DomainError>[0], message: string) => new DomainError(code, message);

function unreachable(error: unknown): boolean {
  return error instanceof BaseError && error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError) !== null;
}

/** The call's answer; undefined when it reverts or the account has no such function. The node not answering throws. */
async function answer(client: PublicClient, call: Parameters<PublicClient['call']>[0]): Promise<Hex | undefined> {
  try {
    return (await client.call(call)).data;
  } catch (error) {
    if (unreachable(error)) throw new DomainError('chain.unavailable', 'the network does not answer');
    return undefined;
  }
}

async function word(client: PublicClient, token: Address, data: Hex): Promise<bigint | undefined> {
  const data32 = await answer(client, { to: token, data });
  return data32 && data32.length === 66 ? BigInt(data32) : undefined;
}

/** A string read; a bytes32 answer (early tokens' symbol) read as text. */
async function text(client: PublicClient, token: Address, functionName: 'symbol' | 'name' | 'version'): Promise<string | undefined> {
  const data = await answer(client, { to: token, data: encodeFunctionData({ abi: erc20Abi, functionName }) });
  if (!data || data === '0x') return undefined;
  if (data.length === 66) return hexToString(data, { size: 32 }).replace(/\0+$/, '');
  try { return decodeAbiParameters([{ type: 'string' }], data)[0]; } catch { return undefined; }
}

const balanceOf = (client: PublicClient, token: Address, account: Address) =>
  word(client, token, encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [account] }));

/** The newest recipient in the token's Transfer logs holding at least `least` (up to `holderLookbackBlocks` back). */
async function findHolder(client: PublicClient, token: Address, least: bigint): Promise<Address | undefined> {
  const head = await client.getBlockNumber({ cacheTime: 0 }).catch(() => { throw new DomainError('chain.unavailable', 'the network does not answer'); });
  const seen = new Set<Address>();
  for (let to = head; to >= 0n && head - to < holderLookbackBlocks; to -= logWindow) {
    const from = to >= logWindow - 1n ? to - logWindow + 1n : 0n;
    const logs = await client.getLogs({ address: token, event: erc20Abi[8], fromBlock: from, toBlock: to }).catch(() => []);
    for (const log of logs.reverse()) {
      const recipient = log.args.to && getAddress(log.args.to);
      if (!recipient || seen.has(recipient) || recipient === trialPayee || BigInt(recipient) === 0n) continue;
      seen.add(recipient);
      if (((await balanceOf(client, token, recipient)) ?? 0n) >= least) return recipient;
      if (seen.size >= 20) return undefined;
    }
    if (from === 0n) break;
  }
  return undefined;
}

/** The trial amounts: 1 and 7 base units (rounding through shares shows there), then one whole token or what is left. */
export function trialAmounts(balance: bigint, decimals: number): bigint[] {
  const rest = balance - 8n;
  const whole = 10n ** BigInt(decimals);
  return rest > 7n ? [1n, 7n, rest < whole ? rest : whole] : [1n, 7n];
}

/**
 * Transfers each amount from `holder` to `trialPayee` inside an eth_call (TokenProbe on the holder's
 * address). A balance change off by at most 2 base units is shares rounded through an index (a
 * rebasing token); more is a fee taken on transfer.
 */
async function trialTransfers(client: PublicClient, token: Address, holder: Address, decimals: number): Promise<void> {
  const balance = (await balanceOf(client, token, holder)) ?? 0n;
  if (balance < 8n) throw refuse('token.no_holder', `${holder} holds ${balance} base units of ${token}, below the 8 a trial transfer needs: name a holder with --holder`);
  const amounts = trialAmounts(balance, decimals);
  const data = encodeFunctionData({ abi: tokenProbeAbi, functionName: 'trials', args: [token, trialPayee, amounts] });
  let result: Hex | undefined;
  try {
    result = (await client.call({ to: holder, data, stateOverride: [{ address: holder, code: tokenProbeCode }] })).data;
  } catch (error) {
    if (unreachable(error)) throw new DomainError('chain.unavailable', 'the network does not answer');
    const revert = error instanceof BaseError ? error.walk((e) => typeof (e as { data?: unknown }).data === 'string') as { data?: Hex } | null : null;
    let amount = '';
    try { if (revert?.data) amount = ` of ${decodeErrorResult({ abi: tokenProbeAbi, data: revert.data }).args[0]} base units`; } catch { /* another revert */ }
    throw refuse('token.trial_failed', `a trial transfer${amount} from ${holder} reverted (paused, blacklisted, or not an ERC-20 transfer): name another holder with --holder`);
  }
  const balances = decodeAbiParameters([{ type: 'uint256[]' }], result ?? '0x')[0];
  amounts.forEach((amount, i) => {
    const [senderBefore, payeeBefore, senderAfter, payeeAfter] = balances.slice(i * 4, i * 4 + 4) as [bigint, bigint, bigint, bigint];
    const sent = senderBefore - senderAfter;
    const received = payeeAfter - payeeBefore;
    if (sent === amount && received === amount) return;
    const off = [sent - amount, received - amount].map((d) => (d < 0n ? -d : d)).reduce((a, b) => (a > b ? a : b));
    if (off <= 2n) {
      throw refuse('token.rebasing', `a transfer of ${amount} base units moved ${sent} from the sender and ${received} to the payee: a rebasing token (balances are shares through an index)`);
    }
    throw refuse('token.fee_on_transfer', `a transfer of ${amount} base units delivered ${received} (the sender lost ${sent}): the token takes a fee on transfer`);
  });
}

/** The EIP-712 domain: `eip712Domain()` (EIP-5267), else `name()` with `version()` (USDC's), else version "1". */
async function domainOf(client: PublicClient, token: Address, name: string): Promise<{ name: string; version: string }> {
  const data = await answer(client, { to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'eip712Domain' }) });
  if (data && data.length > 2) {
    try {
      const [, domainName, version] = decodeAbiParameters(erc20Abi[6].outputs, data);
      return { name: domainName, version };
    } catch { /* not EIP-5267 */ }
  }
  return { name, version: (await text(client, token, 'version')) ?? '1' };
}

/**
 * EIP-3009 as the platform uses it: a throwaway key signs a transfer of 0 to `trialPayee` under the
 * token's domain, and the token's `transferWithAuthorization(v, r, s)` executes it in an eth_call.
 */
async function eip3009Domain(client: PublicClient, token: Address, chainId: number, name: string): Promise<{ name: string; version: string } | null> {
  const domain = await domainOf(client, token, name);
  const signer = privateKeyToAccount(generatePrivateKey());
  const message = { from: signer.address, to: trialPayee, value: 0n, validAfter: 0n, validBefore: 2n ** 255n, nonce: generatePrivateKey() };
  const signature = await signer.signTypedData({
    domain: { ...domain, chainId, verifyingContract: token },
    types: { TransferWithAuthorization: [
      { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
    ] },
    primaryType: 'TransferWithAuthorization', message,
  });
  const { r, s, yParity } = parseSignature(signature);
  const data = encodeFunctionData({
    abi: erc20Abi, functionName: 'transferWithAuthorization',
    args: [message.from, message.to, 0n, 0n, message.validBefore, message.nonce, yParity + 27, r, s],
  });
  try {
    await client.call({ to: token, data });
    return domain;
  } catch (error) {
    if (unreachable(error)) throw new DomainError('chain.unavailable', 'the network does not answer');
    return null;
  }
}

/**
 * EIP-7702 on the network: a throwaway key delegates to code (a state override) that answers its own
 * address, in an eth_call of a type-4 transaction. The node answering the key's address has EIP-7702;
 * refusing the transaction type, or answering nothing (authorization ignored), does not.
 */
export async function hasEip7702(client: PublicClient, chainId: number): Promise<boolean> {
  const authority = privateKeyToAccount(generatePrivateKey());
  const authorization = await authority.signAuthorization({ chainId, address: delegateTarget, nonce: 0 });
  const data = await answer(client, {
    account: trialPayee, to: authority.address, authorizationList: [authorization], stateOverride: [{ address: delegateTarget, code: selfAddressCode }],
  });
  return data !== undefined && data.length === 66 && BigInt(data) === BigInt(authority.address);
}

/**
 * Inspects `contract` on the client's network; refuses with a typed error (stable code) what the
 * platform cannot settle: no code (`token.not_a_contract`), not answering the ERC-20 reads
 * (`token.not_erc20`), a fee on transfer (`token.fee_on_transfer`), rebasing (`token.rebasing`), a
 * trial transfer reverting (`token.trial_failed`), no holder to try with (`token.no_holder`), and a
 * token without EIP-3009 on a network without EIP-7702 (`token.needs_eip7702`).
 */
export async function inspectToken(client: PublicClient, contract: Address, options: { holder?: Address } = {}): Promise<TokenInspection> {
  const token = getAddress(contract);
  const code = await client.getCode({ address: token }).catch(() => { throw new DomainError('chain.unavailable', 'the network does not answer'); });
  if (!code || code === '0x') throw refuse('token.not_a_contract', `no contract at ${token}: an account without code`);
  const [symbol, name, decimals, totalSupply, anyBalance] = await Promise.all([
    text(client, token, 'symbol'), text(client, token, 'name'),
    word(client, token, encodeFunctionData({ abi: erc20Abi, functionName: 'decimals' })),
    word(client, token, encodeFunctionData({ abi: erc20Abi, functionName: 'totalSupply' })),
    balanceOf(client, token, trialPayee),
  ]);
  const missing = Object.entries({ 'symbol()': symbol, 'decimals()': decimals, 'totalSupply()': totalSupply, 'balanceOf(address)': anyBalance })
    .filter(([, value]) => value === undefined).map(([read]) => read);
  if (missing.length > 0 || decimals! > 36n) {
    throw refuse('token.not_erc20', `${token} does not answer as an ERC-20: ${missing.length > 0 ? `no ${missing.join(', ')}` : `decimals ${decimals}`}`);
  }
  const holder = options.holder ? getAddress(options.holder) : await findHolder(client, token, 8n);
  if (!holder) throw refuse('token.no_holder', `no holder of ${token} found in its Transfer logs of the last ${holderLookbackBlocks} blocks: name one with --holder`);
  // decimals is at most 36 here: Number() of it is exact.
  await trialTransfers(client, token, holder, Number(decimals));
  const chainId = await client.getChainId();
  const eip3009 = await eip3009Domain(client, token, chainId, name ?? symbol!);
  if (!eip3009 && !(await hasEip7702(client, chainId))) {
    throw refuse('token.needs_eip7702', `${symbol} has no EIP-3009 and the network has no EIP-7702: the platform cannot move it from custodial accounts`);
  }
  return {
    contractAddress: token, symbol: symbol!, name: name ?? symbol!, decimals: Number(decimals), totalSupply: totalSupply!, holder, eip3009,
    transferPath: eip3009 ? 'eip3009' : 'account',
  };
}
