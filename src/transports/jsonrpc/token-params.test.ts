import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { openStore, type Store } from '../../store/db.ts';
import { createWalletRepository } from '../../store/wallet-repository.ts';
import { createAuthorizationRepository } from '../../store/authorization-repository.ts';
import { createKeyVault } from '#shared/key-vault.ts';
import { sha256Hex } from '#shared/hash.ts';
import { createWalletService, type WalletService } from '../../wallet/wallet-service.ts';
import type { WalletDeps } from '../../wallet/wallet-deps.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import { tokenMethods } from './methods/token-methods.ts';

// The token API's params from outside (temp keys, hash keys, addresses, data, mnemonics) through the
// real dispatcher, methods and wallet on a real SQLite store: every request is answered with a result
// or a refusal of the interface (invalid params, a domain result code below 500), never the internal
// error a TypeError turns into. The methods that reach a chain node are test/token-api.test.ts's;
// these stop at the store.
const seed = 29;
let store: Store;
let dataDir: string;
let wallet: WalletService;
let rpc: Dispatcher;
let account: { address: string; secretKey: string };
const loggedErrors: unknown[] = [];

before(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-token-params-'));
  store = await openStore({ dataDir });
  const deps = {
    repo: createWalletRepository(store.db),
    authorizations: createAuthorizationRepository(store.db),
    vault: createKeyVault(randomBytes(32)),
    clock: () => Date.now(),
    tempKeyTtlMs: 60_000,
    authorizationTtlSeconds: 600,
  } as Partial<WalletDeps> as WalletDeps; // no chain, relayer or contracts: these methods never reach one
  wallet = createWalletService(deps);
  rpc = createDispatcher({ methods: tokenMethods(wallet), batchLimit: 10 });
  account = await wallet.createAddress();
});

after(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const context = {
  network: () => 'payment' as never,
  log: { error: (details: object) => { loggedErrors.push(details); } },
};

async function call(method: string, params: unknown): Promise<{ error?: { code: number }; result?: { resultCode: string } }> {
  const text = await rpc.handle(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), context);
  assert.ok(text, 'a request with an id is answered');
  return JSON.parse(text);
}

/** Answered as the interface answers: a result, invalid params, or a domain refusal below 500. */
function assertInterfaceAnswer(answer: { error?: { code: number }; result?: { resultCode: string } }, what: unknown): void {
  if (answer.error) {
    // Params that are not an object or an array: an invalid request; the wrong fields: invalid params.
    assert.ok([-32600, -32602].includes(answer.error.code), `${JSON.stringify(what)}: ${JSON.stringify(answer)}`);
    return;
  }
  assert.ok(answer.result, JSON.stringify(answer));
  assert.ok(Number(answer.result.resultCode) < 500, `${JSON.stringify(what)}: ${JSON.stringify(answer)}`);
}

/** Strings a caller may send: anything, hex of every length and case, near-addresses, the live account's own values. */
function hostileStrings(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.stringMatching(/^(0x)?[0-9a-fA-FxX]{0,70}$/),
    fc.constantFrom(account.address, account.address.toLowerCase(), account.address.toUpperCase().replace('0X', '0x'), `${account.address} `,
      '0x0000000000000000000000000000000000000000', sha256Hex('x'), sha256Hex('x').toUpperCase(), '', ' ', '\u0000', '١٢٣'),
    fc.anything({ maxDepth: 1 }),
  );
}

test('net_getTempKey, signData and importAddress: any params get a result or a refusal of the interface, never the internal error', async () => {
  const { tempKey } = await wallet.issueTempKey({ address: account.address, keyType: 'transfer' });
  const liveHashKey = sha256Hex(`${tempKey}|${account.secretKey}`);
  const strings = fc.oneof(hostileStrings(), fc.constantFrom(tempKey, liveHashKey, liveHashKey.toUpperCase()));
  const keyTypes = fc.oneof(fc.constantFrom('transfer', 'createToken', 'Transfer', ''), fc.anything({ maxDepth: 0 }));
  const requests = fc.oneof(
    fc.record({ method: fc.constant('net_getTempKey'), params: fc.record({ address: strings, keyType: keyTypes }, { requiredKeys: [] }) }),
    fc.record({ method: fc.constant('signData'), params: fc.record({ address: strings, tempKey: strings, hashKey: strings, data: strings, keyType: keyTypes }, { requiredKeys: [] }) }),
    fc.record({ method: fc.constant('importAddress'), params: fc.record({ mnemonic: fc.oneof(strings, fc.constant('test test test test test test test test test test test junk')) }, { requiredKeys: [] }) }),
    fc.record({ method: fc.constantFrom('net_getTempKey', 'signData', 'importAddress', 'createAddress'), params: fc.anything({ maxDepth: 2 }) }),
  );
  await fc.assert(fc.asyncProperty(requests, async ({ method, params }) => {
    assertInterfaceAnswer(await call(method, params), { method, params });
  }), { seed, numRuns: 250 });
  assert.deepEqual(loggedErrors, [], 'no request was logged as a service error');
});

test('signData signs with a live temp key and its hashKey in either case, and refuses every other hashKey with the interface code', async () => {
  const { tempKey } = await wallet.issueTempKey({ address: account.address, keyType: 'transfer' });
  const hashKey = sha256Hex(`${tempKey}|${account.secretKey}`);
  const data = sha256Hex('order 42');
  for (const good of [hashKey, hashKey.toUpperCase()]) {
    const answer = await call('signData', { address: account.address, tempKey, hashKey: good, data });
    assert.equal(answer.result?.resultCode, '200', JSON.stringify(answer));
  }
  await fc.assert(fc.asyncProperty(fc.string({ minLength: 1, maxLength: 90 }).filter((s) => s.toLowerCase() !== hashKey), async (wrong) => {
    const answer = await call('signData', { address: account.address, tempKey, hashKey: wrong, data });
    assert.equal(answer.result?.resultCode, '441', JSON.stringify(answer));
  }), { seed, numRuns: 200 });
});
