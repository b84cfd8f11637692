import { encodeDeployData, getAddress, toFunctionSelector, type Address, type Hex } from 'viem';
import type { ChainJournal } from './chain-journal.ts';
import type { Clock } from '#shared/clock.ts';
import type { ChainClients } from './chain-clients.ts';
import type { Relayer } from './relayer.ts';
import { networkNames, type NetworkName } from '#shared/networks.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../gen/contracts/vixp-token.ts';
import { ethrDidRegistryAbi, ethrDidRegistryBytecode } from '../gen/contracts/ethr-did-registry.ts';
import { vixpSettlementAbi, vixpSettlementBytecode } from '../gen/contracts/vixp-settlement.ts';
import { vixpayAccountAbi, vixpayAccountBytecode } from '../gen/contracts/vixpay-account.ts';
import { vixpAccountSettlementAbi, vixpAccountSettlementBytecode } from '../gen/contracts/vixp-account-settlement.ts';

export const vixpSymbol = 'VIXP';
export const vixpName = 'VIXP';
export const vixpDecimals = 18;

export interface PlatformContracts {
  vixpToken: Address;
  didRegistry: Address;
  /** Executes batches of EIP-3009 transfer authorizations, each item on its own (contracts/VixpSettlement.sol). */
  settlement: Address;
  /**
   * The code custodial accounts delegate to (EIP-7702) to move tokens without EIP-3009 (USDT, the
   * BEP-20 pegs): contracts/VixpayAccount.sol, one deployment per network; an account delegated to it
   * has the code `0xef0100 ‖ account`.
   */
  account: Address;
  /** Executes batches of delegated accounts' signed transfers, each item on its own (contracts/VixpAccountSettlement.sol). */
  accountSettlement: Address;
}

/**
 * The settlement contract's deployment name. A new name for each calldata layout: a platform started
 * on the state of an earlier version (its deployments table names the old contract) deploys this one
 * rather than calling the old contract with the new ABI. 4: `settle(bytes)`, the batch packed for data-priced
 * chains (per token its payees once, short integers, the platform's counter nonces: issue 37); 3: the item's fourth word is the validity
 * window (`validAfter << 128 | validBefore`), so any `validAfter` is carried (contracts/VixpSettlement.sol);
 * 2 took the same 7-word items with `validBefore` alone there and called the token with `validAfter` 0;
 * 2: per-token groups of 7-word items with EIP-2098 signatures; the first one (`VixpSettlement`) took one
 * `(token, from, to, value, validAfter, validBefore, nonce, bytes signature)` tuple per item.
 */
export const settlementDeploymentName = 'VixpSettlement-4';
/**
 * The account contract's and its batch contract's deployment names: a new name for each version of
 * their code (an account delegated to an earlier VixpayAccount is delegated again to this one by its
 * next transfer, src/chain/account-settlement.ts; its nonces stay, in the ERC-7201 namespace).
 */
export const accountDeploymentName = 'VixpayAccount-1';
export const accountSettlementDeploymentName = 'VixpAccountSettlement-1';

/** The selector of the settlement entry point the relayer calls: a configured contract must have it. */
const settleSelector = toFunctionSelector(vixpSettlementAbi.find((entry) => entry.type === 'function' && entry.name === 'settle')!);
/** The entry points a configured account contract and account batch contract must have. */
const signedTransferSelector = toFunctionSelector(vixpayAccountAbi.find((entry) => entry.type === 'function' && entry.name === 'signedTransfer')!);
const accountSettleSelector = toFunctionSelector(vixpAccountSettlementAbi.find((entry) => entry.type === 'function' && entry.name === 'settle')!);

export type PlatformContractsByNetwork = Readonly<Record<NetworkName, PlatformContracts>>;

export interface PlatformContractsDeps {
  journal: Pick<ChainJournal, 'findDeployment' | 'findConfirmedDeployment' | 'recordDeployment'>;
  chains: ChainClients;
  relayer: Relayer;
  clock: Clock;
  /** Contracts already on a network (`CONTRACTS_<NETWORK>`): used as they are, never deployed. */
  configured?: Readonly<Partial<Record<NetworkName, Readonly<Partial<PlatformContracts>>>>>;
}

/**
 * Deploys the VIXP token (owned by the platform account), the ERC-1056 DID registry, the
 * settlement contract, the account contract and its batch contract on every network the first time
 * (in this order, each by the platform account: the same addresses on every fresh chain), and reuses them after: an address is kept only while the chain still
 * has code there. A deployment journaled before a crash is picked up from its receipt.
 */
export async function ensurePlatformContracts(deps: PlatformContractsDeps): Promise<PlatformContractsByNetwork> {
  const entries = await Promise.all(networkNames.map(async (network): Promise<[NetworkName, PlatformContracts]> => {
    const given = deps.configured?.[network] ?? {};
    const vixpToken = given.vixpToken ? await useConfigured(deps, network, 'vixpToken', given.vixpToken) : await ensureDeployed(deps, network, 'VixpToken', encodeDeployData({
      abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: [vixpName, vixpSymbol, deps.relayer.address, 0n],
    }));
    const didRegistry = given.didRegistry ? await useConfigured(deps, network, 'didRegistry', given.didRegistry) : await ensureDeployed(deps, network, 'EthereumDIDRegistry', encodeDeployData({
      abi: ethrDidRegistryAbi, bytecode: ethrDidRegistryBytecode,
    }));
    const settlement = given.settlement ? await useConfigured(deps, network, 'settlement', given.settlement) : await ensureDeployed(deps, network, settlementDeploymentName, encodeDeployData({
      abi: vixpSettlementAbi, bytecode: vixpSettlementBytecode,
    }));
    const account = given.account ? await useConfigured(deps, network, 'account', given.account) : await ensureDeployed(deps, network, accountDeploymentName, encodeDeployData({
      abi: vixpayAccountAbi, bytecode: vixpayAccountBytecode,
    }));
    const accountSettlement = given.accountSettlement ? await useConfigured(deps, network, 'accountSettlement', given.accountSettlement)
      : await ensureDeployed(deps, network, accountSettlementDeploymentName, encodeDeployData({ abi: vixpAccountSettlementAbi, bytecode: vixpAccountSettlementBytecode }));
    return [network, { vixpToken, didRegistry, settlement, account, accountSettlement }];
  }));
  return Object.freeze(Object.fromEntries(entries) as Record<NetworkName, PlatformContracts>);
}

async function ensureDeployed(deps: PlatformContractsDeps, network: NetworkName, name: string, data: Hex): Promise<Address> {
  const { journal, chains, relayer, clock } = deps;
  const { client, chainId } = chains[network];
  const hasCode = async (address: Address) => ((await client.getCode({ address })) ?? '0x') !== '0x';

  const known = await journal.findDeployment(network, name);
  if (known && known.chainId === chainId && (await hasCode(getAddress(known.address)))) return getAddress(known.address);

  const journaled = await journal.findConfirmedDeployment(network, name);
  let address: Address | undefined;
  let txHash: Hex | undefined;
  if (journaled) {
    const receipt = await client.getTransactionReceipt({ hash: journaled as Hex }).catch(() => undefined);
    if (receipt?.contractAddress && (await hasCode(receipt.contractAddress))) {
      address = getAddress(receipt.contractAddress);
      txHash = receipt.transactionHash;
    }
  }
  if (!address || !txHash) {
    const result = await relayer.send(network, { data, intent: { kind: 'deploy', reference: name } });
    if (!result.receipt?.contractAddress) throw new Error(`deployment of ${name} on ${network} was not confirmed`);
    address = getAddress(result.receipt.contractAddress);
    txHash = result.txHash;
  }
  await journal.recordDeployment({ network, name, chainId, address, txHash }, clock());
  return address;
}

/**
 * A contract configured by address: it must have code there, a VIXP token must be owned by the
 * platform account (which mints), and a settlement contract must be this release's (its code holds
 * the `settle` selector the relayer calls: one deployed from an earlier contracts/VixpSettlement.sol
 * does not); anything else stops the start with the setting named.
 */
async function useConfigured(deps: PlatformContractsDeps, network: NetworkName, name: keyof PlatformContracts, configured: Address): Promise<Address> {
  const { client } = deps.chains[network];
  const setting = `CONTRACTS_${network.toUpperCase()}`;
  const address = getAddress(configured);
  const code = (await client.getCode({ address })) ?? '0x';
  if (code === '0x') {
    throw new Error(`${setting}: ${name}=${address} has no contract code on ${network}`);
  }
  if (name === 'settlement' && !code.toLowerCase().includes(settleSelector.slice(2))) {
    throw new Error(`${setting}: settlement=${address} is not the settlement contract of this release (no ${settleSelector} settle entry point; an earlier VixpSettlement?): deploy contracts/VixpSettlement.sol, or leave settlement out and the platform deploys it`);
  }
  if (name === 'account' && !code.toLowerCase().includes(signedTransferSelector.slice(2))) {
    throw new Error(`${setting}: account=${address} is not the account contract of this release (no ${signedTransferSelector} signedTransfer): deploy contracts/VixpayAccount.sol, or leave account out and the platform deploys it`);
  }
  if (name === 'accountSettlement' && !code.toLowerCase().includes(accountSettleSelector.slice(2))) {
    throw new Error(`${setting}: accountSettlement=${address} is not the account batch contract of this release (no ${accountSettleSelector} settle entry point): deploy contracts/VixpAccountSettlement.sol, or leave accountSettlement out and the platform deploys it`);
  }
  if (name === 'vixpToken') {
    const owner = await client.readContract({ address, abi: vixpTokenAbi, functionName: 'owner' }).catch(() => undefined);
    if (!owner || getAddress(owner) !== getAddress(deps.relayer.address)) {
      throw new Error(`${setting}: the VIXP token at ${address} is owned by ${owner ?? 'no one we can read'}, not the platform account ${deps.relayer.address}, which mints`);
    }
  }
  return address;
}
