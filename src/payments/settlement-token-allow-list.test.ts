import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allowSettlementToken, disallowSettlementToken, listSettlementTokens, type SettlementTokenAllowListDeps } from './settlement-token-allow-list.ts';
import { resolveSettlementToken } from '../commerce/settlement-token.ts';
import { createSettlementTokenRepository } from '../store/settlement-token-repository.ts';
import { openPaymentsParts, usdx, userToken, vixp, type PaymentsParts } from '../../test/support/payments-parts.ts';
import { DomainError } from '#shared/errors.ts';
import type { TokenInspection } from '../chain/token-inspection.ts';

// The operator's allow-list of settlement tokens on the real settlement-token repository (SQLite);
// the wallet's token lookup is the stand-in's (test/support/payments-parts.ts), and so is the chain's
// inspection of a contract (on real anvils in src/chain/token-inspection.test.ts and
// test/settlement-token.test.ts). Which tokens a payment, refund or reward may move.
const inspections = new Map<string, Omit<TokenInspection, 'totalSupply' | 'holder'>>([
  [userToken.contractAddress, { contractAddress: userToken.contractAddress, symbol: 'MINE', name: 'Mine', decimals: 18, eip3009: { name: 'Mine', version: '1' }, transferPath: 'eip3009' }],
  [usdx.contractAddress, { contractAddress: usdx.contractAddress, symbol: 'USDX', name: 'USD X', decimals: 6, eip3009: null, transferPath: 'account' }],
]);
const inspect = async (_network: string, contract: string, options: { holder?: string }) => {
  const found = inspections.get(contract);
  if (!found) throw new DomainError('token.not_a_contract', `no contract at ${contract}: an account without code`);
  return { ...found, totalSupply: 1n, holder: (options.holder ?? contract) as `0x${string}` };
};

async function withParts(body: (parts: PaymentsParts, deps: SettlementTokenAllowListDeps) => Promise<void>) {
  const parts = await openPaymentsParts();
  const deps = { wallet: parts.deps.wallet, settlementTokens: createSettlementTokenRepository(parts.store.db), clock: () => parts.now, inspect };
  try { await body(parts, deps); } finally { await parts.dispose(); }
}

test('allowing a token: by any spelling of its address, once; from then on it settles payments; VIXP is never listed', () => withParts(async (parts, deps) => {
  await parts.store.db.deleteFrom('settlement_tokens').execute();
  await assert.rejects(resolveSettlementToken(parts.deps, 'ethereum', { contractAddress: userToken.contractAddress }), { code: 'payment.token_not_accepted' });
  const allowedAt = parts.now;
  assert.deepEqual(await allowSettlementToken(deps, 'ethereum', userToken.contractAddress.toLowerCase()),
    { network: 'ethereum', contractAddress: userToken.contractAddress, tokenSymbol: 'MINE', decimals: 18, eip3009: true, transferPath: 'eip3009', platformToken: false, allowedAt });
  assert.equal((await resolveSettlementToken(parts.deps, 'ethereum', { contractAddress: userToken.contractAddress })).tokenSymbol, 'MINE');
  parts.now += 5000;
  assert.equal((await allowSettlementToken(deps, 'ethereum', userToken.contractAddress)).allowedAt, allowedAt, 'allowed again: the first entry stays');
  assert.deepEqual(await allowSettlementToken(deps, 'ethereum', vixp.contractAddress),
    { network: 'ethereum', contractAddress: vixp.contractAddress, tokenSymbol: 'VIXP', decimals: 18, eip3009: true, transferPath: 'eip3009', platformToken: true, allowedAt: null });
  assert.deepEqual((await deps.settlementTokens.list('ethereum')).map((t) => t.contractAddress), [userToken.contractAddress]);
  await assert.rejects(allowSettlementToken(deps, 'ethereum', 'not-an-address'), { code: 'request.invalid', details: 'contract', message: 'the contract is not a valid address' });
  await assert.rejects(allowSettlementToken(deps, 'ethereum', '0x00000000000000000000000000000000000000ee'), { code: 'token.not_a_contract' });
  await assert.rejects(allowSettlementToken(deps, 'ethereum', userToken.contractAddress, { holder: 'nope' }), { code: 'request.invalid', details: 'holder' });
}));

test('taking a token off: refused from then on; VIXP cannot be taken off; a token not listed is answered not removed', () => withParts(async (parts, deps) => {
  await assert.rejects(disallowSettlementToken(deps, 'ethereum', vixp.contractAddress.toLowerCase()), { code: 'request.invalid', details: 'contract', message: /VIXP always settles payments on ethereum/ });
  await assert.rejects(disallowSettlementToken(deps, 'ethereum', 'nope'), { code: 'request.invalid', details: 'contract', message: 'the contract is not a valid address' });
  assert.deepEqual(await disallowSettlementToken(deps, 'ethereum', usdx.contractAddress.toLowerCase()), { network: 'ethereum', contractAddress: usdx.contractAddress, removed: true });
  await assert.rejects(resolveSettlementToken(parts.deps, 'ethereum', { contractAddress: usdx.contractAddress }), { code: 'payment.token_not_accepted' });
  assert.deepEqual(await disallowSettlementToken(deps, 'ethereum', usdx.contractAddress), { network: 'ethereum', contractAddress: usdx.contractAddress, removed: false });
}));

test('the list: each network\'s VIXP first, then its allowed tokens in the order allowed, with their decimals and transfer path', () => withParts(async (parts, deps) => {
  parts.now += 1000;
  await allowSettlementToken(deps, 'ethereum', userToken.contractAddress);
  await allowSettlementToken(deps, 'optimism', usdx.contractAddress);
  const platform = (network: string) => ({ network, contractAddress: vixp.contractAddress, tokenSymbol: 'VIXP', decimals: 18, eip3009: true, transferPath: 'eip3009', platformToken: true, allowedAt: null });
  const listed = (network: string, token: typeof usdx, allowedAt: number) => ({
    network, contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, decimals: token.decimals, eip3009: true, transferPath: 'eip3009', platformToken: false, allowedAt,
  });
  assert.deepEqual(await listSettlementTokens(deps, 'ethereum'), [platform('ethereum'), listed('ethereum', usdx, parts.now - 1000), listed('ethereum', userToken, parts.now)]);
  assert.deepEqual(await listSettlementTokens(deps), [
    platform('ethereum'), listed('ethereum', usdx, parts.now - 1000), listed('ethereum', userToken, parts.now),
    platform('optimism'), { ...listed('optimism', usdx, parts.now), eip3009: false, transferPath: 'account' }, platform('bnb'), platform('opbnb'),
  ]);
}));
