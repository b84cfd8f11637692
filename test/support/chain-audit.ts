import {
  createTestClient, createWalletClient, http, parseEther, parseEventLogs, type Address, type Hex, type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import type { ChainClient } from '../../src/chain/chain-clients.ts';

/** Anvil's own controls (mining on or off, mine a block) on a chain the platform runs. */
export function anvilControls(chain: ChainClient) {
  return createTestClient({ mode: 'anvil', transport: http(chain.url) });
}

/** Every transaction mined in blocks `fromBlock`..latest: what anyone reading the chain can copy. */
export async function minedTransactions(client: PublicClient, fromBlock: bigint): Promise<Array<{ hash: Hex; to: Address | null; input: Hex }>> {
  const latest = await client.getBlockNumber();
  const found: Array<{ hash: Hex; to: Address | null; input: Hex }> = [];
  for (let n = fromBlock; n <= latest; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) found.push({ hash: tx.hash, to: tx.to, input: tx.input });
  }
  return found;
}

/** A fresh account holding `ether` native coin for gas and nothing else, as a wallet client on `chain`. */
export async function strangerWallet(chain: ChainClient, ether: string) {
  const account = privateKeyToAccount(generatePrivateKey());
  await chain.client.request({ method: 'anvil_setBalance' as never, params: [account.address, `0x${parseEther(ether).toString(16)}`] as never });
  return createWalletClient({ account, transport: http(chain.url) });
}

/**
 * A stranger with gas money and nothing else re-sends the calldata of each transaction (a settlement
 * batch, a single transfer, a cancellation), with a gas limit high enough for every item of a full
 * batch, so each is mined even when it reverts. Answers how many moved tokens: mined with an ERC-20
 * `Transfer` event in their receipt. (A batch whose items are all spent is mined successfully and
 * moves nothing: success alone proves nothing.)
 */
export async function replayAsStranger(chain: ChainClient, transactions: Array<{ to: Address | null; input: Hex }>): Promise<number> {
  const wallet = await strangerWallet(chain, '100');
  const chainDef = { id: chain.chainId, name: chain.network, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [chain.url] } } };
  let moved = 0;
  for (const tx of transactions) {
    if (!tx.to) continue;
    const hash = await wallet.sendTransaction({ chain: chainDef, to: tx.to, data: tx.input, gas: 20_000_000n });
    const receipt = await chain.client.waitForTransactionReceipt({ hash, timeout: 30_000 });
    if (receipt.status !== 'success') continue;
    if (parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs }).length > 0) moved++;
  }
  return moved;
}

/**
 * Conservation on a token: the sum of the balances of every address that ever received it equals
 * its total supply, which equals what was minted (transfers from the zero address).
 */
export async function tokenLedger(client: PublicClient, token: Address): Promise<{ totalSupply: bigint; sumOfBalances: bigint; minted: bigint }> {
  const transfers = await client.getContractEvents({ address: token, abi: vixpTokenAbi, eventName: 'Transfer', fromBlock: 0n });
  const holders = new Set<Address>();
  let minted = 0n;
  for (const log of transfers) {
    if (log.args.to) holders.add(log.args.to);
    if (log.args.from === '0x0000000000000000000000000000000000000000') minted += log.args.value ?? 0n;
  }
  holders.delete('0x0000000000000000000000000000000000000000');
  let sumOfBalances = 0n;
  for (const holder of holders) sumOfBalances += await client.readContract({ address: token, abi: vixpTokenAbi, functionName: 'balanceOf', args: [holder] });
  const totalSupply = await client.readContract({ address: token, abi: vixpTokenAbi, functionName: 'totalSupply' });
  return { totalSupply, sumOfBalances, minted };
}
