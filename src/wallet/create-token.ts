import { encodeDeployData, getAddress, type Address, type Hex } from 'viem';
import type { NetworkName } from '../shared/networks.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../gen/contracts/vixp-token.ts';
import { parseTokenAmount } from '../shared/amount.ts';
import { DomainError } from '../shared/errors.ts';
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
  /** EIP-191 signature of sha256hex(address|name|symbol|initialSupply|tempKey|hashKey). */
  signature: string;
}

export interface CreateTokenReturnType {
  contractAddress: Address;
  transactionId: Hex;
}

const tokenDecimals = 18;

/**
 * Deploys a new token (the VIXP contract: ERC-20, permit, EIP-3009) owned by `address`, with
 * the initial supply minted to it. Authorised like a transfer, with a temp key of type createToken.
 */
export async function createToken(deps: WalletDeps, network: NetworkName, params: CreateTokenParameters): Promise<CreateTokenReturnType> {
  if (!/^[\p{L}\p{N} ._-]{1,64}$/u.test(params.name)) throw new DomainError('request.invalid', 'name must be 1-64 letters, digits, spaces or ._-', { details: 'name' });
  if (!/^[A-Z0-9]{1,11}$/.test(params.symbol)) throw new DomainError('request.invalid', 'symbol must be 1-11 upper-case letters or digits', { details: 'symbol' });
  const supply = parseTokenAmount(params.initialSupply, tokenDecimals, 'initialSupply');
  const key = await checkTempKey(deps, { address: params.address, keyType: 'createToken', tempKey: params.tempKey, hashKey: params.hashKey });
  await assertSignedBy(key.address, [params.address, params.name, params.symbol, params.initialSupply, params.tempKey, params.hashKey], params.signature);

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
