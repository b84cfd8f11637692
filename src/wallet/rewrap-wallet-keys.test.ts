import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { bytesToHex, recoverMessageAddress } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import type * as Pkcs11js from 'pkcs11js';
import { createKeyVault } from '#shared/key-vault.ts';
import { openPkcs11Token, type Pkcs11Token } from '../chain/pkcs11-token.ts';
import { tokenWrappedKeys, type TokenWrappedKeys } from '../chain/token-wrapped-keys.ts';
import { createAccountKeyRepository, createWalletRepository } from '../store/wallet-repository.ts';
import type { Store } from '../store/db.ts';
import { rewrapWalletKeys, type RewrapStep } from './rewrap-wallet-keys.ts';
import { walletKeys } from './wallet-keys.ts';
import { storeFactories } from '../../test/support/store-factories.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from '../../test/support/softhsm.ts';
import { skipWithout } from '../../test/support/parts.ts';

// `vixpay keys migrate --to pkcs11` and the wrapping key's rotation: every wallet moved exactly once,
// each checked by a signature before it replaces the old form; a run stopped anywhere (a failpoint
// throwing, as a crash would stop it) leaves nothing half-moved, and the next run finishes the job.
const skip = skipWithout('softhsm2', softhsmMissing());

let soft: SoftToken;
let token: Pkcs11Token;
let wrapped: TokenWrappedKeys;
before(() => {
  if (skip) return;
  soft = makeSoftToken();
  token = openPkcs11Token(soft);
  wrapped = tokenWrappedKeys(token);
});
after(() => {
  token?.close();
  soft?.close();
});

/** A throw at the `nth` wallet reaching `step`: the run stops there. */
function crashAt(step: RewrapStep, nth: number): (at: RewrapStep) => void {
  let seen = 0;
  return (at) => {
    if (at === step && ++seen === nth) throw new Error(`failpoint: crash after ${step} of wallet ${nth}`);
  };
}

for (const factory of storeFactories) {
  describe(`wallet keys moved into the token (${factory.name})`, { skip }, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    const vault = createKeyVault(randomBytes(32));
    before(async () => {
      if (skip) return;
      ({ store, dispose } = await factory.open());
    });
    after(async () => { await dispose?.(); });

    const rows = async () => new Map((await store.db.selectFrom('accounts').select(['address', 'private_key_enc']).execute())
      .map((row) => [row.address, row.private_key_enc]));
    const deps = () => ({ accounts: createAccountKeyRepository(store.db), vault, token: wrapped });
    /** Every wallet signs for its own address with what is stored now (as the platform would: file or pkcs11 custody). */
    const assertAllSign = async () => {
      const keys = walletKeys(vault, wrapped);
      for (const [address, sealed] of await rows()) {
        const message = `check ${address}`;
        const signature = await keys.account(sealed, address as `0x${string}`).signMessage({ message });
        assert.equal(await recoverMessageAddress({ message, signature }), address, `${address} signs`);
      }
    };

    test('migrate: stopped after a wrap, and after a replacement, resumed; each wallet moved once, none half-moved, all sign; rotation the same', async () => {
      // The token is shared by both stores' runs: each starts from the newest wrapping key and rotates once.
      const first = await wrapped.currentWrappingKey();
      const second = `vixpay-wallet-wrap-${Number(first.split('-').at(-1)) + 1}`;
      // Twelve wallets of file custody (sealed with the master key) and two made under pkcs11 custody.
      const repo = createWalletRepository(store.db);
      const sealedBefore = new Map<string, string>();
      const inTokenAlready: string[] = [];
      for (let i = 0; i < 14; i++) {
        const privateKey = randomBytes(32);
        const address = privateKeyToAddress(bytesToHex(privateKey));
        const sealed = i < 12 ? vault.encrypt(bytesToHex(privateKey)) : await wrapped.wrap(privateKey);
        sealedBefore.set(address, sealed);
        if (i >= 12) inTokenAlready.push(address);
        assert.ok(await repo.insertAccount({ address, privateKeyEnc: sealed, secretKeyEnc: vault.encrypt('s') }, 1));
      }

      // A crash between the token's wrap and the database's update: the wallet keeps its old form.
      await assert.rejects(rewrapWalletKeys({ ...deps(), failpoint: crashAt('wrapped', 5) }), /failpoint/);
      let now = await rows();
      const moved = [...now].filter(([, sealed]) => sealed.startsWith('p11:'));
      assert.equal(moved.length, 4 + 2, 'four moved before the crash, beside the two wrapped from the start');
      for (const [address, sealed] of now) {
        assert.ok(sealed === sealedBefore.get(address) || sealed.startsWith(`p11:v1:${first}:`), `${address}: old form or wrapped`);
      }
      await assertAllSign();

      // A crash right after a replacement: that wallet is not taken again.
      await assert.rejects(rewrapWalletKeys({ ...deps(), failpoint: crashAt('replaced', 3) }), /failpoint/);
      const resumed = await rewrapWalletKeys(deps());
      assert.deepEqual(resumed, {
        wrappingKey: first, rewrapped: 12 - 4 - 3, movedByOthers: 0, failed: [], remaining: 0,
      });
      now = await rows();
      for (const [address, sealed] of now) assert.ok(sealed.startsWith(`p11:v1:${first}:`), address);
      for (const address of inTokenAlready) assert.equal(now.get(address), sealedBefore.get(address), 'the wallets already in the token are left as they were');
      await assertAllSign();
      assert.equal((await rewrapWalletKeys(deps())).rewrapped, 0, 'a run after the last moves nothing');

      // Rotation: a new wrapping key, every wallet wrapped again under it inside the token, stopped and resumed the same way.
      await assert.rejects(rewrapWalletKeys({ ...deps(), failpoint: crashAt('verified', 6) }, { rotate: true }), /failpoint/);
      now = await rows();
      assert.equal([...now.values()].filter((sealed) => sealed.startsWith(`p11:v1:${second}:`)).length, 5);
      assert.equal([...now.values()].filter((sealed) => sealed.startsWith(`p11:v1:${first}:`)).length, 9);
      await assertAllSign();
      // New wallets are wrapped under the newest key at once.
      assert.ok((await wrapped.wrap(randomBytes(32))).startsWith(`p11:v1:${second}:`));
      const rotated = await rewrapWalletKeys(deps());
      assert.deepEqual({ key: rotated.wrappingKey, rewrapped: rotated.rewrapped, remaining: rotated.remaining }, { key: second, rewrapped: 9, remaining: 0 });
      for (const [address, sealed] of await rows()) assert.ok(sealed.startsWith(`p11:v1:${second}:`), address);
      await assertAllSign();
    });

    test('a wallet another run moved while this one checked it is left with the other run\'s form, counted, not replaced again', async () => {
      const repo = createWalletRepository(store.db);
      const key = randomBytes(32);
      const address = privateKeyToAddress(bytesToHex(key));
      const sealed = vault.encrypt(bytesToHex(key));
      await repo.insertAccount({ address, privateKeyEnc: sealed, secretKeyEnc: 's' }, 1);
      let theirs = '';
      const result = await rewrapWalletKeys({
        ...deps(),
        failpoint: async (step, at) => {
          if (step !== 'verified' || at !== address || theirs) return;
          theirs = await wrapped.wrap(key);
          assert.ok(await createAccountKeyRepository(store.db).replaceKey(address, sealed, theirs), 'the other run replaces it first');
        },
      });
      assert.deepEqual({ rewrapped: result.rewrapped, movedByOthers: result.movedByOthers, remaining: result.remaining }, { rewrapped: 0, movedByOthers: 1, remaining: 0 });
      assert.equal((await rows()).get(address), theirs);
      await store.db.deleteFrom('accounts').where('address', '=', address).execute();
    });

    test('a wallet whose stored key does not open or signs as another address is left as it was and reported; the others move', async () => {
      const repo = createWalletRepository(store.db);
      const other = randomBytes(32);
      const liar = privateKeyToAddress(bytesToHex(randomBytes(32)));
      await repo.insertAccount({ address: liar, privateKeyEnc: vault.encrypt(bytesToHex(other)), secretKeyEnc: 's' }, 1);
      const broken = privateKeyToAddress(bytesToHex(randomBytes(32)));
      await repo.insertAccount({ address: broken, privateKeyEnc: 'v1:AAAA:AAAA:AAAA', secretKeyEnc: 's' }, 1);
      const good = randomBytes(32);
      const goodAddress = privateKeyToAddress(bytesToHex(good));
      await repo.insertAccount({ address: goodAddress, privateKeyEnc: vault.encrypt(bytesToHex(good)), secretKeyEnc: 's' }, 1);

      const result = await rewrapWalletKeys(deps());
      assert.equal(result.rewrapped, 1);
      assert.deepEqual(result.failed.map((failure) => failure.address).sort(), [broken, liar].sort());
      assert.match(result.failed.find((failure) => failure.address === liar)!.reason, /does not recover to its key/);
      assert.match(result.failed.find((failure) => failure.address === broken)!.reason, /does not open/);
      assert.equal(result.remaining, 2);
      const now = await rows();
      assert.equal(now.get(liar), (await repo.findAccount(liar))!.privateKeyEnc);
      assert.ok(!now.get(liar)!.startsWith('p11:') && !now.get(broken)!.startsWith('p11:'));
      assert.ok(now.get(goodAddress)!.startsWith(`p11:v1:${result.wrappingKey}:`));
      await store.db.deleteFrom('accounts').where('address', 'in', [liar, broken]).execute();
    });
  });
}

test('the wrapping keys stay in the token: sensitive, not extractable, one per rotation', { skip }, async () => {
  const p = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;
  const labels = await token.run(async ({ p11, handle }) => {
    p11.C_FindObjectsInit(handle, [{ type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }]);
    const found = p11.C_FindObjects(handle, 100);
    p11.C_FindObjectsFinal(handle);
    return found.map((key) => {
      const [label, sensitive, extractable] = p11.C_GetAttributeValue(handle, key, [{ type: p.CKA_LABEL }, { type: p.CKA_SENSITIVE }, { type: p.CKA_EXTRACTABLE }]);
      assert.deepEqual([sensitive!.value, extractable!.value], [Buffer.from([1]), Buffer.from([0])]);
      return label!.value!.toString();
    });
  });
  // The first, then one per rotation (one per store's run).
  assert.deepEqual(labels.sort(), Array.from({ length: labels.length }, (_, i) => `vixpay-wallet-wrap-${i + 1}`));
  assert.ok(labels.length >= 2);
});
