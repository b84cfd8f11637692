// Signatures per second: in-process (libsecp256k1, file custody) beside a SoftHSM2 token through
// PKCS#11 (KEY_CUSTODY=pkcs11): the relayer's lanes (keys in the token) and wallet keys wrapped by it
// (unwrapped for each signature, or kept unwrapped in the token after the first: PKCS11_UNWRAPPED_KEYS), one after
// the other in the same run, one signer at a time and four at once.
// `npx node bench/custody-signing.ts` (needs Debian's softhsm2; prints one JSON line per case).
import { generatePrivateKey } from 'viem/accounts';
import type { LocalAccount } from 'viem';
import { localAccount } from '../src/chain/local-account.ts';
import { openPkcs11Token } from '../src/chain/pkcs11-token.ts';
import { loadTokenLanes } from '../src/chain/token-account.ts';
import { tokenWrappedKeys } from '../src/chain/token-wrapped-keys.ts';
import { hexToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { makeSoftToken } from '../test/support/softhsm.ts';

const signatures = Number(process.argv.find((arg) => arg.startsWith('--signatures='))?.slice('--signatures='.length) ?? 2000);

async function rate(accounts: LocalAccount[], parallel: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: parallel }, async (_, worker) => {
    while (next < signatures) {
      next += 1;
      await accounts[worker % accounts.length]!.signMessage({ message: `settlement ${next}` });
    }
  }));
  return Math.round(signatures / ((performance.now() - started) / 1000));
}

const soft = makeSoftToken('vixpay-bench');
const token = openPkcs11Token(soft);
try {
  const wrapped = tokenWrappedKeys(token, { unwrappedKeys: 0 });
  const kept = tokenWrappedKeys(token);
  const walletKeys = Array.from({ length: 4 }, () => generatePrivateKey());
  const custodies = {
    file: walletKeys.map((key) => localAccount(key)),
    // The relayer's lanes: keys generated in the token.
    pkcs11: await loadTokenLanes(token, 4),
    // Wallet keys wrapped by the token: each signature unwraps one as a session object.
    'pkcs11-wrapped': await Promise.all(walletKeys.map(async (key) => wrapped.account(await wrapped.wrap(hexToBytes(key)), privateKeyToAddress(key)))),
    // The same, kept unwrapped in the token after their first signature (the platform's default).
    'pkcs11-wrapped-kept': await Promise.all(walletKeys.map(async (key) => kept.account(await kept.wrap(hexToBytes(key)), privateKeyToAddress(key)))),
  };
  for (const parallel of [1, 4]) {
    for (const [custody, accounts] of Object.entries(custodies)) {
      await rate(accounts, parallel); // warm-up
      console.log(JSON.stringify({ custody, parallel, signaturesPerSecond: await rate(accounts, parallel) }));
    }
  }
} finally {
  token.close();
  soft.close();
}
