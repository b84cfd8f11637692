import { encodeDeployData, getAddress, zeroAddress, type Address, type Hex } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../gen/contracts/vixp-token.ts';
import { parseTokenAmount } from '#shared/amount.ts';
import { DomainError } from '#shared/errors.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { checkTempKey, consumeTempKey } from './temp-key.ts';
import { assertSignedBy } from './signed-request.ts';

export interface CreateTokenParameters {
  address: string;
  name: string;
  symbol: string;
  /** Decimal string in token units (18 decimals), minted to `address`. */
  initialSupply: string;
  tempKey: string;
  hashKey: string;
  /** EIP-191 signature of one of the two signed strings of `createTokenSignedFields`. */
  signature: string;
}

/**
 * The strings a createToken signature may sign (fields exactly as sent, joined by "|", sha256 hex):
 * - docs/interfaces.md#key-scheme's form `fromAddress|toAddress|amount|tempKey|hashKey`, with fromAddress = `address` (the
 *   owner, who signs), toAddress = the zero address (a deployment has no recipient; a transfer never
 *   goes to it, so no transfer's signed string is ever a createToken's), amount = `initialSupply`;
 * - our earlier form `address|name|symbol|initialSupply|tempKey|hashKey`.
 * Neither adds to what the temp key and hashKey authorise (signData signs any hash for whoever holds
 * them), so accepting both weakens nothing; see docs/decisions/transfers.md.
 */
export function createTokenSignedFields(params: Omit<CreateTokenParameters, 'signature'>): { spec: string[]; named: string[] } {
  return {
    spec: [params.address, zeroAddress, params.initialSupply, params.tempKey, params.hashKey],
    named: [params.address, params.name, params.symbol, params.initialSupply, params.tempKey, params.hashKey],
  };
}

async function assertCreateTokenSigned(owner: Address, params: CreateTokenParameters): Promise<void> {
  const { spec, named } = createTokenSignedFields(params);
  try {
    await assertSignedBy(owner, spec, params.signature);
  } catch {
    await assertSignedBy(owner, named, params.signature);
  }
}

export interface CreateTokenReturnType {
  contractAddress: Address;
  transactionId: Hex;
}

const tokenDecimals = 18;

/**
 * Deploys a new token (the VIXP contract: ERC-20, permit, EIP-3009) owned by `address`, with
 * the initial supply minted to it. Authorised like a transfer: a temp key of keyType `transfer`
 * (docs/interfaces.md#key-scheme's) or `createToken` (ours), its hashKey, and a signature (`createTokenSignedFields`).
 */
export async function createToken(deps: WalletDeps, network: NetworkName, params: CreateTokenParameters): Promise<CreateTokenReturnType> {
  if (!/^[\p{L}\p{N} ._-]{1,64}$/u.test(params.name)) throw new DomainError('request.invalid', 'name must be 1-64 letters, digits, spaces or ._-', { details: 'name' });
  if (!/^[A-Z0-9]{1,11}$/.test(params.symbol)) throw new DomainError('request.invalid', 'symbol must be 1-11 upper-case letters or digits', { details: 'symbol' });
  const supply = parseTokenAmount(params.initialSupply, tokenDecimals, 'initialSupply');
  const key = await checkTempKey(deps, { address: params.address, keyType: ['transfer', 'createToken'], tempKey: params.tempKey, hashKey: params.hashKey });
  await assertCreateTokenSigned(key.address, params);

  await consumeTempKey(deps, key.keyHash);
  const result = await deps.relayer.send(network, {
    data: encodeDeployData({ abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: [params.name, params.symbol, key.address, supply] }),
    intent: { kind: 'deploy', reference: `token:${params.symbol}`, fromAddress: key.address, amount: supply.toString() },
  });
  const deployed = result.receipt?.contractAddress;
  if (!deployed) throw new DomainError('chain.unavailable', 'the token deployment is not confirmed yet', { details: result.txHash });
  const contractAddress = getAddress(deployed);
  await deps.repo.insertToken({
    network, contract_address: contractAddress, symbol: params.symbol, name: params.name, decimals: tokenDecimals,
    owner: key.address, created_at: deps.clock(),
  });
  return { contractAddress, transactionId: result.txHash };
}
