import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createPublicClient, createWalletClient, encodeFunctionData, getContract, http, parseSignature, parseUnits, type Abi, type Address, type PublicClient,
} from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from '../src/chain/anvil-process.ts';
import { deployShapedToken, shapedTokens, type ShapedTokenKind } from './support/shaped-tokens.ts';
import { assertReverts, holder, owner, payee, relayer } from './support/token-contracts.ts';

// The tokens shaped like the real ones (contracts/test/) behave as the real ones do where the
// platform's code depends on it: decimals, USDT's answerless transfer, USDC's EIP-3009, pause and
// blacklist, a fee taken or shares rounded on transfer.
let anvil: AnvilProcess | undefined;
let publicClient: PublicClient;
const tokens = {} as Record<ShapedTokenKind, Address>;
const walletOf = (account: typeof owner) => createWalletClient({ account, chain: foundry, transport: http(anvil!.url) });

before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0 });
  publicClient = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  for (const kind of Object.keys(shapedTokens) as ShapedTokenKind[]) tokens[kind] = await deployShapedToken(publicClient, walletOf(owner), kind);
});
after(async () => { await anvil?.stop(); });

const tokenAs = (kind: ShapedTokenKind, account = owner) =>
  getContract({ address: tokens[kind], abi: shapedTokens[kind].abi as Abi, client: { public: publicClient, wallet: walletOf(account) } });
const balanceOf = async (kind: ShapedTokenKind, account: Address) => (await tokenAs(kind).read.balanceOf!([account])) as bigint;
const mined = async (hash: `0x${string}`) => {
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  return receipt;
};

test('decimals: USDT and USDC 6, the BEP-20 18', async () => {
  assert.equal(await tokenAs('usdt').read.decimals!(), 6);
  assert.equal(await tokenAs('usdc').read.decimals!(), 6);
  assert.equal(await tokenAs('bep20').read.decimals!(), 18);
  assert.equal(await tokenAs('usdt').read.symbol!(), 'USDT');
  assert.equal(await tokenAs('usdc').read.symbol!(), 'USDC');
});

test('USDT: transfer moves the amount and answers no bytes at all (not a bool); no EIP-3009', async () => {
  const data = encodeFunctionData({ abi: shapedTokens.usdt.abi, functionName: 'transfer', args: [payee.address, 5n] });
  const answer = await publicClient.call({ account: owner.address, to: tokens.usdt, data });
  assert.equal(answer.data, undefined, 'USDT answers nothing');
  await mined(await walletOf(owner).sendTransaction({ to: tokens.usdt, data }));
  assert.equal(await balanceOf('usdt', payee.address), 5n);
  await assert.rejects(publicClient.call({ to: tokens.usdt, data: '0xe94a0102' + '00'.repeat(64) as `0x${string}` }), 'authorizationState is not there');
});

test('USDT: a paused token or a blacklisted sender reverts the transfer', async () => {
  await mined(await tokenAs('usdt').write.mint!([holder.address, 100n]));
  await mined(await tokenAs('usdt').write.addBlackList!([holder.address]));
  await assertReverts(tokenAs('usdt', holder).simulate.transfer!([payee.address, 1n], { account: holder }), undefined);
  await mined(await tokenAs('usdt').write.removeBlackList!([holder.address]));
  await mined(await tokenAs('usdt').write.pause!());
  await assertReverts(tokenAs('usdt', holder).simulate.transfer!([payee.address, 1n], { account: holder }), undefined);
  await mined(await tokenAs('usdt').write.unpause!());
  await tokenAs('usdt', holder).simulate.transfer!([payee.address, 1n], { account: holder });
});

test('USDC: EIP-3009 in the domain ("USD Coin", "2"); a relayer submits what the holder signed', async () => {
  const value = parseUnits('1.5', 6);
  await mined(await tokenAs('usdc').write.mint!([holder.address, value]));
  assert.equal(await tokenAs('usdc').read.version!(), '2');
  const message = { from: holder.address, to: payee.address, value, validAfter: 0n, validBefore: 2n ** 255n, nonce: `0x${'11'.repeat(32)}` as const };
  const signature = await holder.signTypedData({
    domain: { name: 'USD Coin', version: '2', chainId: foundry.id, verifyingContract: tokens.usdc },
    types: { TransferWithAuthorization: [
      { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
    ] },
    primaryType: 'TransferWithAuthorization', message,
  });
  const { r, s, yParity } = parseSignature(signature);
  const usdc = tokenAs('usdc', relayer);
  await mined(await usdc.write.transferWithAuthorization!([...Object.values(message), yParity + 27, r, s]));
  assert.equal(await balanceOf('usdc', payee.address), value);
});

test('USDC: paused, or a blacklisted party, reverts with USDC\'s reasons', async () => {
  await mined(await tokenAs('usdc').write.mint!([holder.address, 10n]));
  await mined(await tokenAs('usdc').write.blacklist!([payee.address]));
  await assertReverts(tokenAs('usdc', holder).simulate.transfer!([payee.address, 1n], { account: holder }), undefined, 'Blacklistable: account is blacklisted');
  await mined(await tokenAs('usdc').write.unBlacklist!([payee.address]));
  await mined(await tokenAs('usdc').write.pause!());
  await assertReverts(tokenAs('usdc', holder).simulate.transfer!([payee.address, 1n], { account: holder }), undefined, 'Pausable: paused');
  await mined(await tokenAs('usdc').write.unpause!());
});

test('fee-on-transfer: the payee receives 99% of what is sent', async () => {
  await mined(await tokenAs('fee').write.transfer!([payee.address, 1000n]));
  assert.equal(await balanceOf('fee', payee.address), 990n);
});

test('rebasing: a payee\'s balance moves by the amount rounded through the index, and at each rebase', async () => {
  await mined(await tokenAs('rebasing').write.transfer!([payee.address, 1n]));
  assert.equal(await balanceOf('rebasing', payee.address), 0n, '1 / 1.1 is 0 shares');
  await mined(await tokenAs('rebasing').write.transfer!([payee.address, 1000n]));
  const held = await balanceOf('rebasing', payee.address);
  await mined(await tokenAs('rebasing').write.rebase!([2_200_000_000_000_000_000n]));
  assert.equal(await balanceOf('rebasing', payee.address), held * 2n + 1n);
});
