import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createWalletClient, decodeFunctionData, getAddress, http, parseGwei, toHex, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { DomainError, type DomainErrorCode } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { vixpayAccountAbi } from '../gen/contracts/vixpay-account.ts';
import type { AuthorizationRepository } from '../store/authorization-repository.ts';
import type { Relayer } from '../chain/relayer.ts';
import {
  hashKeyOf, network, openTransferParts, startFlakyNode, vixp, type CustodialWallet, type FlakyNode, type TransferParts,
} from '../../test/support/transfer-parts.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { issueTempKey } from './temp-key.ts';
import { signedMessage } from './signed-request.ts';
import { resolveAuthorization } from './resolve-authorization.ts';
import { transfer, type TransferParameters } from './transfer.ts';

// The token API's transfer (docs/token-api.md, `transfer`) from a custodial wallet, on a real anvil
// with VIXP and the settlement contract, the real relayer and a real SQLite store: what moves on chain,
// what the answer says, what the temp key and the held funds become. A disk that fills mid-transfer is
// the one failure injected (the store's writes refused with `store.full`).

let parts: TransferParts;
let flaky: FlakyNode;
before(async () => {
  parts = await openTransferParts();
  flaky = await startFlakyNode(parts.anvil.url);
});
after(async () => {
  await flaky?.close();
  await parts?.dispose();
});

/** A signed transfer request of `from`'s, with a temp key issued for it. */
async function requestOf(from: CustodialWallet, to: Address, amount: string, extra: Partial<TransferParameters> = {}): Promise<TransferParameters> {
  const { tempKey } = await issueTempKey(parts.deps, { address: from.address, keyType: 'transfer' });
  const hashKey = hashKeyOf(tempKey, from.secretKey);
  const signature = await from.account.signMessage({ message: signedMessage([from.address, to, amount, tempKey, hashKey]) });
  return { fromAddress: from.address, toAddress: to, amount, tempKey, hashKey, signature, ...extra };
}

const usedAt = async (tempKey: string) => (await parts.deps.repo.findTempKey(sha256Hex(tempKey)))?.usedAt;
/** The key of the transfer's authorization row (its operation's), or one no row has. */
const nonceOf = async (params: TransferParameters) =>
  (await parts.deps.authorizations.findByReference(network, params.reference ?? `transfer:${sha256Hex(params.tempKey)}`))?.nonce ?? 'none';

async function refusal(promise: Promise<unknown>): Promise<{ code: DomainErrorCode; message: string; details: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  throw new Error('not refused');
}

/** Polls `check` until it is true (each step a few ms; no time is asserted). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('transfer on the account path (a network with EIP-7702, the platform\'s default)', () => {
  test('the account\'s first transfer carries its delegation and nonce 0, the next neither asks the node nor delegates: nonce 1; each moves exactly, to the account\'s own call', async () => {
    const deps = parts.accountDeps;
    const { client } = parts.chains[network];
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    const first = await requestOf(alice, bob.address, '2.5');
    const answer = await transfer(deps, network, first);
    assert.equal(answer.status, 'settled');
    const tx = await client.getTransaction({ hash: answer.transactionId });
    assert.equal(tx.to?.toLowerCase(), alice.address.toLowerCase(), 'a batch of one is the account\'s own signedTransfer');
    assert.equal(tx.type, 'eip7702');
    assert.deepEqual(tx.authorizationList?.map((a) => [a.address.toLowerCase(), a.nonce]), [[parts.account.toLowerCase(), 0]], 'its delegation, at its transaction count');
    assert.equal((await client.getCode({ address: alice.address }))?.toLowerCase(), `0xef0100${parts.account.slice(2).toLowerCase()}`);
    const row = await parts.deps.authorizations.find(await nonceOf(first));
    assert.deepEqual([row?.nonce, row?.status, row?.txHash, row?.validBefore === undefined ? undefined : BigInt(row.validBefore) - 1n],
      [`${network}:account:${alice.address.toLowerCase()}:0x${'0'.repeat(64)}`, 'used', answer.transactionId, await deadlineOf(answer.transactionId)], 'its account nonce 0, signed until a second before the row\'s validity');
    assert.ok(deps.delegated.has(network, parts.account, alice.address), 'seen delegated once its item executed');

    const second = await requestOf(alice, bob.address, '1');
    const next = await transfer(deps, network, second);
    assert.equal(next.status, 'settled');
    const nextTx = await client.getTransaction({ hash: next.transactionId });
    assert.equal(nextTx.type, 'eip1559', 'no delegation carried again');
    assert.equal((await parts.deps.authorizations.find(await nonceOf(second)))?.nonce, `${network}:account:${alice.address.toLowerCase()}:0x${'0'.repeat(63)}1`);
    assert.equal(await parts.balanceOf(alice.address), vixp('6.5'));
    assert.equal(await parts.balanceOf(bob.address), vixp('3.5'));
  });

  test('with EIP-7702 off, a token without EIP-3009 is refused before anything is reserved: its temp key kept', async () => {
    const alice = await parts.newWallet('1');
    const usdt = getAddress('0x00000000000000000000000000000000000000c4');
    await parts.store.db.insertInto('settlement_tokens').values({
      network, contract_address: usdt, symbol: 'USDT', name: 'Tether USD', decimals: 6, eip712_version: null, transfer_path: 'account', allowed_at: 0,
    }).execute();
    const params = await requestOf(alice, alice.address, '1', { contractAddress: usdt });
    assert.deepEqual(await refusal(transfer(parts.deps, network, params)),
      { code: 'token.needs_eip7702', message: 'USDT has no EIP-3009 and EIP7702_ETHEREUM is off: the platform cannot move it from custodial accounts', details: undefined });
    assert.equal(await usedAt(params.tempKey), null);
    assert.equal(await nonceOf(params), 'none');
  });
});

/** The deadline a mined account transfer was signed with: the `deadline` of its `signedTransfer` call. */
async function deadlineOf(hash: Hex): Promise<bigint> {
  const tx = await parts.chains[network].client.getTransaction({ hash });
  const { args } = decodeFunctionData({ abi: vixpayAccountAbi, data: tx.input });
  return (args as readonly unknown[])[4] as bigint;
}

describe('transfer', () => {
  test('moves the amount once, in the transaction answered; the temp key is used up and a replay of the request is refused', async () => {
    const alice = await parts.newWallet('100');
    const bob = await parts.newWallet('0');
    const params = await requestOf(alice, bob.address, '2.5');
    const started = Date.now();
    const answer = await transfer(parts.deps, network, params);
    const ended = Date.now();
    assert.equal(answer.status, 'settled');
    const { valid_before: validBefore } = await parts.store.db.selectFrom('authorizations').select('valid_before').where('nonce', '=', (await nonceOf(params))).executeTakeFirstOrThrow();
    assert.ok(Number(validBefore) >= Math.floor(started / 1000) + 120 && Number(validBefore) <= Math.floor(ended / 1000) + 120, 'valid for AUTHORIZATION_TTL from its signing');
    assert.deepEqual({ ...answer, transactionId: undefined }, { status: 'settled', transactionId: undefined, amountRaw: '2500000000000000000', contractAddress: parts.token });
    const receipt = await parts.chains[network].client.getTransactionReceipt({ hash: answer.transactionId });
    assert.equal(receipt.status, 'success');
    assert.equal(await parts.balanceOf(alice.address), vixp('97.5'));
    assert.equal(await parts.balanceOf(bob.address), vixp('2.5'));
    assert.deepEqual(await parts.authorization((await nonceOf(params))), { status: 'used', txHash: answer.transactionId, cancelTxHash: null });
    assert.ok(!(await nonceOf(params)).startsWith(`${network}:account:`), 'an EIP-3009 authorization, not an account nonce (no EIP-7702 here)');
    assert.equal(receipt.to?.toLowerCase(), parts.token.toLowerCase(), 'a batch of one is the token\'s own transferWithAuthorization');
    assert.notEqual(await usedAt(params.tempKey), null, 'the temp key is spent');

    assert.deepEqual(await refusal(transfer(parts.deps, network, params)), { code: 'wallet.temp_key_invalid', message: 'tempKey was already used', details: undefined });
    assert.equal(await parts.balanceOf(bob.address), vixp('2.5'), 'the replay moved nothing');
  });

  test('a contractAddress naming VIXP is VIXP; a reference given is the operation: a second transfer for it is refused and its temp key kept', async () => {
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    const reference = `payment:${randomBytes(8).toString('hex')}`;
    const first = await requestOf(alice, bob.address, '1', { reference, contractAddress: parts.token.toLowerCase() });
    assert.equal((await transfer(parts.deps, network, first)).status, 'settled');
    assert.equal((await parts.authorization((await parts.deps.authorizations.findByReference(network, reference))!.nonce))?.status, 'used', 'the authorization is the reference\'s');
    assert.equal(await parts.deps.authorizations.findByReference(network, `transfer:${sha256Hex(first.tempKey)}`), undefined);

    const second = await requestOf(alice, bob.address, '1', { reference });
    assert.deepEqual(await refusal(transfer(parts.deps, network, second)),
      { code: 'request.invalid', message: 'this operation already has a transfer authorization', details: undefined });
    assert.equal(await usedAt(second.tempKey), null, 'nothing reserved: the temp key is still usable');
    assert.equal(await parts.balanceOf(bob.address), vixp('1'));
  });

  test('an amount above the balance less what pending transfers hold is refused wallet.insufficient_balance: nothing signed, the temp key kept', async () => {
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    const tooMuch = await requestOf(alice, bob.address, '10.000000000000000001');
    assert.deepEqual(await refusal(transfer(parts.deps, network, tooMuch)),
      { code: 'wallet.insufficient_balance', message: 'the balance, less what pending transfers hold, is below the amount', details: undefined });
    assert.equal(await usedAt(tooMuch.tempKey), null);
    assert.equal(await parts.authorization((await nonceOf(tooMuch))), undefined);
    // Two at once: the second one's reservation sees the first one's held.
    const [a, b] = await Promise.all([requestOf(alice, bob.address, '6'), requestOf(alice, bob.address, '6')]);
    const outcomes = await Promise.allSettled([transfer(parts.deps, network, a), transfer(parts.deps, network, b)]);
    assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
    const refused = outcomes.find((o) => o.status === 'rejected')!;
    assert.equal((refused.reason as DomainError).code, 'wallet.insufficient_balance');
    assert.equal(await parts.balanceOf(bob.address), vixp('6'));
    assert.equal(await parts.balanceOf(alice.address), vixp('4'));
  });

  test('a request that does not hold up is refused before anything is reserved: addresses, amount, token, hashKey, signature', async () => {
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    const params = await requestOf(alice, bob.address, '1');
    const cases: Array<[Partial<TransferParameters>, DomainErrorCode, string]> = [
      [{ fromAddress: '0x1234' }, 'request.invalid', 'fromAddress is not a valid address'],
      [{ toAddress: 'bob' }, 'request.invalid', 'toAddress is not a valid address'],
      [{ contractAddress: '0x00000000000000000000000000000000000000aa' }, 'wallet.unknown_token', `no token of ours at 0x00000000000000000000000000000000000000aa on ${network}`],
      [{ amount: '1.5x' }, 'request.invalid', 'amount is not a valid amount'],
      [{ hashKey: hashKeyOf(params.tempKey, 'not the secret key') }, 'wallet.hash_key_invalid', 'hashKey does not match'],
      [{ amount: '2' }, 'wallet.signature_invalid', 'signature does not match the request'],
      [{ tempKey: randomBytes(32).toString('hex') }, 'wallet.temp_key_invalid', 'tempKey is unknown or not issued for this address and keyType'],
    ];
    for (const [change, code, message] of cases) {
      const answer = await refusal(transfer(parts.deps, network, { ...params, ...change }));
      assert.equal(answer.code, code, JSON.stringify(change));
      if (code !== 'request.invalid' || !change.amount) assert.equal(answer.message, message);
    }
    assert.equal(await usedAt(params.tempKey), null);
    assert.equal(await parts.authorization((await nonceOf(params))), undefined);
    assert.equal((await transfer(parts.deps, network, params)).status, 'settled', 'the request itself still goes through');
  });

  test('a wallet whose key the platform cannot reach (an HSM-wrapped key without KEY_CUSTODY=pkcs11) is refused custody.unavailable: its temp key is usable again, nothing held', async () => {
    const stored = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    await parts.store.db.updateTable('accounts').set({ private_key_enc: 'p11:key-in-an-hsm' }).where('address', '=', stored.address).execute();
    const params = await requestOf(stored, bob.address, '1');
    assert.equal((await refusal(transfer(parts.deps, network, params))).code, 'custody.unavailable');
    assert.equal(await usedAt(params.tempKey), null, 'the temp key is given back for a retry');
    assert.equal(await parts.authorization((await nonceOf(params))), undefined, 'the reservation is undone');
    assert.equal(await parts.balanceOf(stored.address), vixp('10'));
  });

  test('a node that does not answer: chain.unavailable before anything is reserved (the block number, then the balance)', async () => {
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    const deps: WalletDeps = { ...parts.deps, chains: { ...parts.chains, [network]: flaky.chainClient(parts.chains[network]) } };
    const unavailable = { code: 'chain.unavailable', message: `network ${network} does not answer`, details: undefined };
    try {
      for (const method of ['eth_blockNumber', 'eth_call']) {
        flaky.down.clear();
        flaky.down.add(method);
        const params = await requestOf(alice, bob.address, '1');
        assert.deepEqual(await refusal(transfer(deps, network, params)), unavailable, method);
        assert.equal(await usedAt(params.tempKey), null, method);
        assert.equal(await parts.authorization((await nonceOf(params))), undefined, method);
      }
      flaky.down.clear();
      const params = await requestOf(alice, bob.address, '1');
      assert.equal((await transfer(deps, network, params)).status, 'settled', 'the node back: the same request goes through');
      const row = await parts.store.db.selectFrom('authorizations').select(['from_block']).where('nonce', '=', (await nonceOf(params))).executeTakeFirstOrThrow();
      const receipt = await parts.chains[network].client.getTransactionReceipt({ hash: (await parts.authorization((await nonceOf(params))))!.txHash as Hex });
      assert.ok(Number(row.from_block) > 0 && BigInt(row.from_block) < receipt.blockNumber, 'its events are searched from the head before it');
    } finally {
      flaky.down.clear();
    }
  });

  test('a full disk before journaling gives the temp key back even when it cannot be undone at once: the same request then goes through', async () => {
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    let full = true;
    const storeFull = () => new DomainError('store.full', 'the disk is full');
    const real = parts.deps.authorizations;
    const authorizations: AuthorizationRepository = { ...real, release: async (...args) => { if (full) throw storeFull(); return real.release(...args); } };
    const relayer: Relayer = { ...parts.relayer, settle: async (...args) => { if (full) throw storeFull(); return parts.relayer.settle(...args); } };
    const deps: WalletDeps = { ...parts.deps, authorizations, relayer };
    const params = await requestOf(alice, bob.address, '3');
    assert.equal((await refusal(transfer(deps, network, params))).code, 'store.full');
    assert.notEqual(await usedAt(params.tempKey), null, 'the disk still full: the reservation holds its temp key');
    full = false;
    const answer = await transfer(deps, network, params);
    assert.equal(answer.status, 'settled');
    assert.equal(await parts.balanceOf(bob.address), vixp('3'));
    assert.deepEqual(await parts.authorization((await nonceOf(params))), { status: 'used', txHash: answer.transactionId, cancelTxHash: null });
  });

  test('a disk that fills after the batch was sent: the chain decides, and the transfer executed is answered settled in its transaction', async () => {
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    const relayer: Relayer = {
      ...parts.relayer,
      settle: async (...args) => {
        await parts.relayer.settle(...args);
        throw new DomainError('store.full', 'the disk is full');
      },
    };
    const params = await requestOf(alice, bob.address, '2');
    const answer = await transfer({ ...parts.deps, relayer }, network, params);
    const record = await parts.authorization((await nonceOf(params)));
    assert.deepEqual(answer, { status: 'settled', transactionId: record?.txHash, amountRaw: vixp('2').toString(), contractAddress: parts.token });
    assert.equal(record?.status, 'used');
    assert.equal(await parts.balanceOf(bob.address), vixp('2'));
    assert.notEqual(await usedAt(params.tempKey), null, 'sent: its temp key stays spent');
  });

  test('a disk that fills after the batch was sent, the batch not mined within the wait: pending with the batch\'s transaction', async () => {
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    const slow = parts.relayerWith({ receiptTimeoutMs: 500 });
    const relayer: Relayer = {
      ...slow,
      settle: async (...args) => {
        await slow.settle(...args);
        throw new DomainError('store.full', 'the disk is full');
      },
    };
    const params = await requestOf(alice, bob.address, '2');
    await parts.setAutomine(false);
    let answer;
    try {
      answer = await transfer({ ...parts.deps, relayer }, network, params);
      await parts.chains[network].client.request({ method: 'evm_mine' as never });
    } finally {
      await parts.setAutomine(true);
    }
    const record = await parts.authorization((await nonceOf(params)));
    assert.match(record?.txHash ?? '', /^0x[0-9a-f]{64}$/);
    assert.deepEqual(answer, { status: 'pending', transactionId: record?.txHash, amountRaw: vixp('2').toString(), contractAddress: parts.token });
    assert.equal(await parts.balanceOf(bob.address), vixp('2'), 'mined: executed once');
  });

  test('executed, and the disk too full to record it: still answered settled (the expiry sweep records it); any other failure to record it is thrown', async () => {
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    let failure: Error = new DomainError('store.full', 'the disk is full');
    const authorizations: AuthorizationRepository = {
      ...parts.deps.authorizations,
      finish: async (...args) => { if (args[1] === 'used') throw failure; return parts.deps.authorizations.finish(...args); },
    };
    const deps: WalletDeps = { ...parts.deps, authorizations };
    const full = await requestOf(alice, bob.address, '1');
    const answer = await transfer(deps, network, full);
    assert.equal(answer.status, 'settled');
    assert.equal((await parts.chains[network].client.getTransactionReceipt({ hash: answer.transactionId })).status, 'success');
    assert.equal((await parts.authorization(await nonceOf(full)))?.status, 'submitted', 'not recorded yet');
    failure = new DomainError('store.unavailable', 'the database connection was lost');
    const lost = await requestOf(alice, bob.address, '1');
    assert.deepEqual(await refusal(transfer(deps, network, lost)), { code: 'store.unavailable', message: 'the database connection was lost', details: undefined });
    assert.equal(await parts.balanceOf(bob.address), vixp('2'), 'both executed');
  });

  test('a transfer not executed (its holder\'s funds moved meanwhile) is cancelled on chain and refused chain.transaction_failed naming its transaction; the transfer beside it settles', async () => {
    const alice = await parts.newWallet('10');
    const carol = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    const { client } = parts.chains[network];
    const [a, c] = await Promise.all([requestOf(alice, bob.address, '1'), requestOf(carol, bob.address, '1')]);
    await parts.setAutomine(false);
    let answers;
    try {
      const sent = [transfer(parts.deps, network, a), transfer(parts.deps, network, c)].map((p) => p.then((v) => ({ ok: v }), (e: unknown) => ({ error: e })));
      // Both journaled (one batch, or two when the machine is slow to reserve the second within the
      // batch window) and in the node's pool; then carol's funds leave first (a higher tip).
      let sentIn: Hex[] = [];
      await until(async () => {
        const rows = await Promise.all([await nonceOf(a), await nonceOf(c)].map((n) => parts.authorization(n)));
        if (!rows.every((row) => row?.status === 'submitted')) return false;
        sentIn = rows.map((row) => row!.txHash as Hex);
        return (await Promise.all(sentIn.map((hash) => client.getTransaction({ hash }).then(() => true, () => false)))).every(Boolean);
      });
      await client.request({ method: 'anvil_setBalance' as never, params: [carol.address, toHex(10n ** 18n)] as never });
      const carolWallet = createWalletClient({ account: carol.account, chain: foundry, transport: http(parts.anvil.url) });
      const drain = await carolWallet.writeContract({
        address: parts.token, abi: vixpTokenAbi, functionName: 'transfer', args: [parts.treasury.address, vixp('10')],
        maxFeePerGas: parseGwei('500'), maxPriorityFeePerGas: parseGwei('400'), gas: 100_000n,
      });
      await until(() => client.getTransaction({ hash: drain }).then(() => true, () => false));
      await client.request({ method: 'evm_mine' as never });
      await parts.setAutomine(true);
      answers = await Promise.all(sent);
      assert.equal((await client.getTransactionReceipt({ hash: drain })).blockNumber, (await client.getTransactionReceipt({ hash: sentIn[1]! })).blockNumber, 'one block');
      const [settled, failed] = answers as [{ ok: { status: string; transactionId: Hex } }, { error: DomainError }];
      assert.equal(settled.ok.status, 'settled');
      assert.equal(settled.ok.transactionId, sentIn[0]);
      assert.ok(failed.error instanceof DomainError, String(failed.error));
      assert.deepEqual({ code: failed.error.code, message: failed.error.message, details: failed.error.details },
        { code: 'chain.transaction_failed', message: 'the transfer was not executed on chain; its authorization is cancelled', details: sentIn[1] });
    } finally {
      await parts.setAutomine(true);
    }
    const record = await parts.authorization(await nonceOf(c));
    assert.equal(record?.status, 'canceled');
    assert.match(record?.cancelTxHash ?? '', /^0x[0-9a-f]{64}$/);
    assert.equal(await client.readContract({ address: parts.token, abi: vixpTokenAbi, functionName: 'authorizationState', args: [carol.address, (await parts.deps.authorizations.findByReference(network, c.reference ?? `transfer:${sha256Hex(c.tempKey)}`))!.chainNonce as Hex] }), true,
      'its nonce is spent on chain: nothing can execute it');
    assert.equal(await parts.balanceOf(bob.address), vixp('1'), 'alice\'s transfer only');
    assert.notEqual(await usedAt(c.tempKey), null, 'sent: its temp key stays spent');
  });

  test('a transfer not mined within the wait is answered pending with its transaction, its funds held; once mined it is settled, once', async () => {
    const alice = await parts.newWallet('10');
    const bob = await parts.newWallet('0');
    const deps: WalletDeps = { ...parts.deps, relayer: parts.relayerWith({ receiptTimeoutMs: 600 }) };
    const params = await requestOf(alice, bob.address, '6');
    await parts.setAutomine(false);
    let answer;
    try {
      answer = await transfer(deps, network, params);
      assert.equal(answer.status, 'pending');
      assert.match(answer.transactionId, /^0x[0-9a-f]{64}$/);
      assert.deepEqual(await parts.authorization((await nonceOf(params))), { status: 'submitted', txHash: answer.transactionId, cancelTxHash: null });
      const more = await requestOf(alice, bob.address, '5');
      assert.equal((await refusal(transfer(parts.deps, network, more))).code, 'wallet.insufficient_balance', 'the pending 6 are held');
      await parts.chains[network].client.request({ method: 'evm_mine' as never });
    } finally {
      await parts.setAutomine(true);
    }
    assert.deepEqual(await resolveAuthorization(deps, network, (await nonceOf(params)) as Hex), { status: 'used', txHash: answer.transactionId });
    assert.equal(await parts.balanceOf(bob.address), vixp('6'));
    assert.equal(await parts.balanceOf(alice.address), vixp('4'));
  });
});
