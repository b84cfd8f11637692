import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { encodeFunctionData, hexToBigInt, parseUnits, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import { vixpayAccountAbi } from '../../src/gen/contracts/vixpay-account.ts';
import { vixpName } from '../../src/chain/platform-contracts.ts';
import { transferAuthorizationTypes } from '../../src/wallet/authorize-transfer.ts';
import { rpcOver } from '../support/server-process.ts';
import { anvilControls, replayAsStranger, strangerWallet } from '../support/chain-audit.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertInvariants, balanceRaw, fundedAccount, signedTransfer, startFaultRig, units, type FaultRig } from './rig.ts';

// A transfer the chain refuses after the platform sent it (the holder's funds left by a path the
// platform did not reserve, mined just ahead of its settlement): the server answers failed only once
// the transfer's nonce is cancelled on chain (at the account: the account path), so the calldata anyone can copy from the chain stays dead
// even after the account is topped up. The server runs as users run it (rig.ts).
let rig: FaultRig;
before(async () => { rig = await startFaultRig(); });
after(async () => { await rig?.stop(); });

/** The custodial key signs a transfer of everything to a sink; a stranger sends it with a higher tip. */
async function drainAhead(holder: Address, amount: bigint): Promise<Hex> {
  const { operator } = rig;
  const chain = operator.chains.ethereum;
  const vixp = operator.contracts.ethereum.vixpToken;
  const stored = await operator.store.db.selectFrom('accounts').select('private_key_enc').where('address', '=', holder).executeTakeFirstOrThrow();
  const key = privateKeyToAccount(operator.vault.decrypt(stored.private_key_enc) as Hex);
  const nonce = `0x${randomUUID().replaceAll('-', '').padEnd(64, '0')}` as Hex;
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3600);
  const sink = privateKeyToAccount(generatePrivateKey()).address;
  const signature = await key.signTypedData({
    domain: { name: vixpName, version: '1', chainId: chain.chainId, verifyingContract: vixp },
    types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization',
    message: { from: holder, to: sink, value: amount, validAfter: 0n, validBefore, nonce },
  });
  const wallet = await strangerWallet(chain, '10');
  await wallet.sendTransaction({
    chain: null, to: vixp, gas: 200_000n, maxFeePerGas: parseUnits('500', 9), maxPriorityFeePerGas: parseUnits('400', 9),
    data: encodeFunctionData({ abi: vixpTokenAbi, functionName: 'transferWithAuthorization', args: [holder, sink, amount, 0n, validBefore, nonce, signature] }),
  });
  return nonce;
}

test('a transfer skipped on chain is answered failed only after its authorization is cancelled; its calldata re-sent after a top-up moves nothing', async () => {
  const { operator } = rig;
  const chain = operator.chains.ethereum;
  const sender = await fundedAccount(rig, 10);
  const receiver = await fundedAccount(rig, 0);
  const request = await signedTransfer(rig, sender, receiver.address, '6');
  const anvil = anvilControls(chain);
  await anvil.setAutomine(false);
  let answer: Promise<any>;
  let authorization: { nonce: string; chain_nonce: string | null; tx_hash: string | null };
  let drained: Hex;
  try {
    answer = rpcOver(rig.server.baseUrl, '/token', 'transfer', request);
    authorization = await waitFor(() => operator.store.db.selectFrom('authorizations').select(['nonce', 'chain_nonce', 'tx_hash'])
      .where('from_address', '=', sender.address).where('status', '=', 'submitted').executeTakeFirst(),
    { timeoutMs: 20_000, message: 'the transfer is journaled and sent' });
    drained = await drainAhead(sender.address as Address, units(10));
    await anvil.mine({ blocks: 1 });
  } finally {
    await anvil.setAutomine(true);
  }
  const result = await answer;
  assert.equal(result.resultCode, '502', `answered failed: ${JSON.stringify(result)}`);
  const record = await operator.store.db.selectFrom('authorizations').selectAll().where('nonce', '=', authorization.nonce).executeTakeFirstOrThrow();
  assert.equal(record.status, 'canceled', 'the authorization was cancelled before the answer');
  // The account path (every custodial transfer on a network with EIP-7702): the nonce is the account's.
  const spent = await chain.client.readContract({
    address: sender.address as Address, abi: vixpayAccountAbi, functionName: 'nonceUsed', args: [hexToBigInt(authorization.chain_nonce as Hex)],
  });
  assert.equal(spent, true, 'its nonce is spent on chain');

  await operator.wallet.mint('ethereum', { to: sender.address, amount: '50' });
  const tx = await chain.client.getTransaction({ hash: authorization.tx_hash as Hex });
  assert.equal(await replayAsStranger(chain, [{ to: tx.to, input: tx.input }]), 0, 'the settlement calldata re-sent by a stranger moves nothing');
  assert.equal(await balanceRaw(rig, sender.address), units(50));
  assert.equal(await balanceRaw(rig, receiver.address), 0n);
  await assertInvariants(rig, { outOfBand: [drained] });
});
