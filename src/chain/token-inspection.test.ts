import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, getAddress, http, type Address, type PublicClient } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { hasEip7702, inspectToken, trialAmounts } from './token-inspection.ts';
import { ethrDidRegistryAbi, ethrDidRegistryBytecode } from '../gen/contracts/ethr-did-registry.ts';
import { deployShapedToken, shapedTokens, type ShapedTokenKind } from '../../test/support/shaped-tokens.ts';
import { owner, stranger } from '../../test/support/token-contracts.ts';

// What `vixpay token allow` learns of a contract, on real anvils: one with EIP-7702 (its latest
// hardfork) and one without (cancun), each with the tokens shaped like the real ones deployed from
// outside the platform.
interface Chain { anvil: AnvilProcess; client: PublicClient; tokens: Record<ShapedTokenKind, Address>; registry: Address }
const chains: Record<'prague' | 'cancun', Chain> = {} as never;

async function open(hardfork?: string): Promise<Chain> {
  const anvil = await startAnvil({ chainId: foundry.id, port: 0, ...(hardfork && { hardfork }) });
  const client = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(anvil.url) });
  const tokens = {} as Record<ShapedTokenKind, Address>;
  for (const kind of Object.keys(shapedTokens) as ShapedTokenKind[]) tokens[kind] = await deployShapedToken(client, wallet, kind);
  const { contractAddress } = await client.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi: ethrDidRegistryAbi, bytecode: ethrDidRegistryBytecode }) });
  return { anvil, client, tokens, registry: getAddress(contractAddress!) };
}

before(async () => { chains.prague = await open(); chains.cancun = await open('cancun'); });
after(async () => { await chains.prague?.anvil.stop(); await chains.cancun?.anvil.stop(); });

test('EIP-7702: present on the latest hardfork, absent on cancun', async () => {
  assert.equal(await hasEip7702(chains.prague.client, foundry.id), true);
  assert.equal(await hasEip7702(chains.cancun.client, foundry.id), false);
});

test('the USDC-like token: 6 decimals, EIP-3009 under its own domain ("USD Coin", "2"); the holder found in its Transfer logs is the deployer', async () => {
  for (const chain of [chains.prague, chains.cancun]) {
    assert.deepEqual(await inspectToken(chain.client, chain.tokens.usdc), {
      contractAddress: chain.tokens.usdc, symbol: 'USDC', name: 'USD Coin', decimals: 6, totalSupply: 1_000_000_000_000n,
      holder: owner.address, eip3009: { name: 'USD Coin', version: '2' }, transferPath: 'eip3009',
    });
  }
});

test('USDT-like and the plain BEP-20: no EIP-3009, moved by the account path where EIP-7702 is; refused where it is not', async () => {
  const usdt = await inspectToken(chains.prague.client, chains.prague.tokens.usdt);
  assert.deepEqual([usdt.symbol, usdt.decimals, usdt.eip3009, usdt.transferPath], ['USDT', 6, null, 'account']);
  const bep20 = await inspectToken(chains.prague.client, chains.prague.tokens.bep20, { holder: owner.address });
  assert.deepEqual([bep20.symbol, bep20.decimals, bep20.eip3009, bep20.transferPath, bep20.totalSupply], ['BSC-USD', 18, null, 'account', 10n ** 24n]);
  await assert.rejects(inspectToken(chains.cancun.client, chains.cancun.tokens.usdt),
    { code: 'token.needs_eip7702', message: 'USDT has no EIP-3009 and the network has no EIP-7702: the platform cannot move it from custodial accounts' });
});

test('refused with the reason: a fee on transfer, a rebasing token, an account without code, a contract that is not an ERC-20, a holder without tokens', async () => {
  const { client, tokens, registry } = chains.prague;
  await assert.rejects(inspectToken(client, tokens.fee), {
    code: 'token.fee_on_transfer',
    message: 'a transfer of 1000000000000000000 base units delivered 990000000000000000 (the sender lost 990000000000000000): the token takes a fee on transfer',
  });
  await assert.rejects(inspectToken(client, tokens.rebasing), { code: 'token.rebasing', message: 'a transfer of 1 base units moved 0 from the sender and 0 to the payee: a rebasing token (balances are shares through an index)' });
  await assert.rejects(inspectToken(client, stranger.address), { code: 'token.not_a_contract' });
  await assert.rejects(inspectToken(client, registry), { code: 'token.not_erc20', message: `${registry} does not answer as an ERC-20: no symbol(), decimals(), totalSupply(), balanceOf(address)` });
  await assert.rejects(inspectToken(client, tokens.usdc, { holder: stranger.address }), { code: 'token.no_holder' });
});

test('trial amounts: 1 and 7 base units, then one whole token or what the holder has left', () => {
  assert.deepEqual(trialAmounts(10n ** 24n, 18), [1n, 7n, 10n ** 18n]);
  assert.deepEqual(trialAmounts(100n, 6), [1n, 7n, 92n]);
  assert.deepEqual(trialAmounts(15n, 6), [1n, 7n]);
});
