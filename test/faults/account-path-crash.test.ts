import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, http, type Address } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { rpcOver } from '../support/server-process.ts';
import { deployShapedToken, shapedTokens } from '../support/shaped-tokens.ts';
import { allowSettlementToken } from '../../src/payments/settlement-token-allow-list.ts';
import { vixpayAccountAbi } from '../../src/gen/contracts/vixpay-account.ts';
import type { FailpointName } from '../../src/shared/failpoints.ts';
import { assertInvariants, fundedAccount, maybeLost, signedTransfer, startFaultRig, type FaultRig, type Funded } from './rig.ts';

// The account path (docs/decisions/tokens.md, a token without EIP-3009: USDT-shaped here) killed at
// each step of its settlement batch, as the EIP-3009 batches are in crash-at-failpoints.test.ts:
// kill -9 of the server before the batch is journaled, after (never broadcast), and after its
// broadcast; then a restart without the failpoint. Each transfer ends moved exactly once or refused
// with nothing moved and its nonce unusable on chain; the restart itself settles what the receipt
// shows (recovery reads the account batch's receipt) and cancels at the account what it did not
// execute, before the transfer's deadline, not at it. The replay of the request is refused (its temp
// key spent), moving nothing.
//
// Authorizations live 30 s here (10 s in the rest of the suite): long enough that "before its
// deadline" is not decided by how fast the server restarts.
let rig: FaultRig;
let usdt: Address;
let asOwner: (functionName: 'transfer' | 'addBlackList' | 'removeBlackList', args: readonly unknown[]) => Promise<void>;
let usdtOf: (address: string) => Promise<bigint>;

const usd = (whole: number) => BigInt(whole) * 1_000_000n;

before(async () => {
  rig = await startFaultRig({ AUTHORIZATION_TTL_SECONDS: '30' });
  const { url, chainId, client: platformClient } = rig.operator.chains.ethereum;
  const client = createPublicClient({ transport: http(url) });
  const deployer = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 8 });
  const wallet = createWalletClient({ account: deployer, chain: { ...platformClient.chain!, id: chainId }, transport: http(url) });
  usdt = await deployShapedToken(client as never, wallet, 'usdt');
  const allowed = await allowSettlementToken(rig.operator.admin.settlementTokens, 'ethereum', usdt, { holder: deployer.address });
  assert.equal(allowed.transferPath, 'account');
  asOwner = async (functionName, args) => {
    const hash = await wallet.writeContract({ address: usdt, abi: shapedTokens.usdt.abi, functionName, args: args as never, chain: wallet.chain, account: deployer });
    assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
  };
  usdtOf = async (address) => await client.readContract({ address: usdt, abi: shapedTokens.usdt.abi, functionName: 'balanceOf', args: [address as Address] }) as bigint;
});
after(async () => { await rig?.stop(); });

/** A custodial account holding `whole` USDT (and no ether). */
async function usdtAccount(whole: number): Promise<Funded> {
  const account = await fundedAccount(rig, 0);
  if (whole > 0) await asOwner('transfer', [account.address, usd(whole)]);
  return account;
}

const transferIn = (request: Awaited<ReturnType<typeof signedTransfer>>) => rpcOver(rig.server.baseUrl, '/token', 'transfer', { ...request, contractAddress: usdt });

/** The account transfer rows of `from`, by nonce. */
const rowsOf = (from: string) => rig.operator.store.db.selectFrom('authorizations').selectAll().where('from_address', '=', from).orderBy('nonce').execute();

const nonceUsed = (account: string, nonce: bigint) => rig.operator.chains.ethereum.client.readContract({ address: account as Address, abi: vixpayAccountAbi, functionName: 'nonceUsed', args: [nonce] });

describe('account-path settlement batch (USDT-shaped)', () => {
  // failpoint; what happens on chain while the server is down; how the transfer ends.
  const cases: Array<[FailpointName, 'nothing' | 'blacklist', 'used' | 'expired' | 'canceled']> = [
    ['relay.before-journal', 'nothing', 'expired'],
    ['relay.after-journal', 'nothing', 'used'],
    ['relay.after-broadcast', 'nothing', 'used'],
    // Journaled, never sent; the token refuses the payer before the restart sends it: the account's
    // call reverts (its delegation applied all the same), and the restart cancels nonce 0 at once.
    ['relay.after-journal', 'blacklist', 'canceled'],
  ];
  const what = { used: 'the restart settles it from the receipt, once, before its deadline', expired: 'never journaled, never sent: nothing moves, it expires',
    canceled: 'the receipt executed nothing: the restart cancels its nonce at the account before its deadline, nothing moves' };
  for (const [name, whileDown, ending] of cases) {
    test(`kill -9 at ${name}${whileDown === 'blacklist' ? ', the payer blacklisted while down' : ''}: ${what[ending]}; the replay is 440`, async () => {
      const sender = await usdtAccount(10);
      const recipient = await usdtAccount(0);
      const request = await signedTransfer(rig, sender, recipient.address, '4');
      await rig.start([name]);
      const reply = maybeLost(transferIn(request));
      await rig.crashedAt(name);
      assert.ok('lost' in await reply, 'the crash cut the reply');
      if (whileDown === 'blacklist') await asOwner('addBlackList', [sender.address]);
      await rig.start();

      // What the restart did before it answers anything: recovery read the receipt, the sweep resolved the rest.
      const [row] = await rowsOf(sender.address);
      assert.ok(row, 'the transfer was reserved before the crash');
      assert.equal(row.nonce.slice(-3), '000', 'the account\'s first nonce');
      if (ending !== 'expired') {
        assert.equal(row.status, ending, `ended by the restart itself: ${JSON.stringify(row)}`);
        assert.ok(Number(row.valid_before) > Date.now() / 1000, 'before its deadline, not by the expiry sweep');
      }
      await assertInvariants(rig);
      const [ended] = await rowsOf(sender.address);
      assert.equal(ended?.status, ending);
      const moved = ending === 'used';
      assert.equal(await usdtOf(recipient.address), moved ? usd(4) : 0n, moved ? 'moved exactly once' : 'nothing moved');
      assert.equal(await usdtOf(sender.address), moved ? usd(6) : usd(10));
      // Never sent (expired): the account is not even delegated, and its signature expired unseen;
      // used or cancelled: its nonce is used up at the account.
      if (ending === 'expired') assert.equal(await rig.operator.chains.ethereum.client.getCode({ address: sender.address as Address }), undefined);
      else assert.equal(await nonceUsed(sender.address, 0n), true);

      const replay = await transferIn(request);
      assert.equal(replay.resultCode, '440', `its temp key was spent with the reservation: ${JSON.stringify(replay)}`);
      assert.equal(await usdtOf(recipient.address), moved ? usd(4) : 0n, 'the replay moved nothing');

      // The account goes on with its next nonce: a new transfer settles once, answered 200.
      if (whileDown === 'blacklist') await asOwner('removeBlackList', [sender.address]);
      const next = await transferIn(await signedTransfer(rig, sender, recipient.address, '1'));
      assert.equal(next.resultCode, '200', JSON.stringify(next));
      assert.equal(await usdtOf(recipient.address), (moved ? usd(4) : 0n) + usd(1));
      assert.deepEqual((await rowsOf(sender.address)).map((r) => [r.nonce.slice(-3), r.status]), [['000', ending], ['001', 'used']]);
      await assertInvariants(rig);
    });
  }
});
