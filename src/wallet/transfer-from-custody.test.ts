import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DomainError } from '#shared/errors.ts';
import { network, openTransferParts, vixp, type TransferParts } from '../../test/support/transfer-parts.ts';
import { transferFromCustody } from './transfer-from-custody.ts';

// A transfer the platform makes from an account it holds (refunds, reward payouts), on a real anvil
// with VIXP, the real relayer and a real SQLite store: the same scheme as an app's (a temp key issued
// and spent, hashKey, the signature), then the ordinary transfer.

let parts: TransferParts;
before(async () => { parts = await openTransferParts(); });
after(async () => { await parts?.dispose(); });

const tempKeysOf = (address: string) => parts.store.db.selectFrom('temp_keys').select(['key_hash', 'key_type', 'used_at']).where('address', '=', address).execute();
const codeOf = async (promise: Promise<unknown>) => {
  try { await promise; } catch (error) { if (error instanceof DomainError) return { code: error.code, message: error.message, details: error.details }; throw error; }
  return undefined;
};

describe('transferFromCustody', () => {
  test('moves the amount from the account the platform holds, spending a transfer temp key issued for it; the authorization is the temp key\'s', async () => {
    const store = await parts.newWallet('20');
    const user = await parts.newWallet('0');
    const answer = await transferFromCustody(parts.deps, network, { fromAddress: store.address.toLowerCase(), toAddress: user.address.toLowerCase(), amount: '7.25' });
    assert.deepEqual({ ...answer, transactionId: undefined }, { status: 'settled', transactionId: undefined, amountRaw: vixp('7.25').toString(), contractAddress: parts.token });
    assert.equal(await parts.balanceOf(user.address), vixp('7.25'));
    assert.equal(await parts.balanceOf(store.address), vixp('12.75'));
    const keys = await tempKeysOf(store.address);
    assert.equal(keys.length, 1);
    assert.equal(keys[0]!.key_type, 'transfer');
    assert.notEqual(keys[0]!.used_at, null);
    assert.deepEqual(await parts.authorization((await parts.deps.authorizations.findByReference(network, `transfer:${keys[0]!.key_hash}`))!.nonce), { status: 'used', txHash: answer.transactionId, cancelTxHash: null });
  });

  test('a reference is the operation\'s (a second transfer for it is refused); the token named is the one moved', async () => {
    const store = await parts.newWallet('20');
    const user = await parts.newWallet('0');
    const reference = `refund:${randomBytes(8).toString('hex')}`;
    const answer = await transferFromCustody(parts.deps, network, { fromAddress: store.address, toAddress: user.address, amount: '1', reference, contractAddress: parts.token.toLowerCase() });
    assert.equal(answer.status, 'settled');
    assert.equal((await parts.deps.authorizations.findByReference(network, reference))?.status, 'used');
    assert.equal((await codeOf(transferFromCustody(parts.deps, network, { fromAddress: store.address, toAddress: user.address, amount: '1', reference })))?.code, 'request.invalid');
    const unknown = '0x00000000000000000000000000000000000000aa';
    assert.deepEqual(await codeOf(transferFromCustody(parts.deps, network, { fromAddress: store.address, toAddress: user.address, amount: '1', contractAddress: unknown })),
      { code: 'wallet.unknown_token', message: `no token of ours at ${unknown} on ${network}`, details: undefined });
    assert.equal(await parts.balanceOf(user.address), vixp('1'));
  });

  test('an account the platform does not hold is refused wallet.unknown_address before any temp key; addresses must be addresses', async () => {
    const user = await parts.newWallet('0');
    const stranger = '0x00000000000000000000000000000000000000bb';
    assert.deepEqual(await codeOf(transferFromCustody(parts.deps, network, { fromAddress: stranger, toAddress: user.address, amount: '1' })),
      { code: 'wallet.unknown_address', message: 'the platform holds no account with this address', details: undefined });
    assert.deepEqual(await tempKeysOf('0x00000000000000000000000000000000000000BB'), []);
    assert.deepEqual(await codeOf(transferFromCustody(parts.deps, network, { fromAddress: 'x', toAddress: user.address, amount: '1' })),
      { code: 'request.invalid', message: 'fromAddress is not a valid address', details: 'fromAddress' });
    assert.deepEqual(await codeOf(transferFromCustody(parts.deps, network, { fromAddress: user.address, toAddress: 'y', amount: '1' })),
      { code: 'request.invalid', message: 'toAddress is not a valid address', details: 'toAddress' });
  });
});
