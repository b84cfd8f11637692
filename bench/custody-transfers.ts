// Token-API transfers per second and p99 with the relayer's and the wallets' keys in a SoftHSM2 token
// (KEY_CUSTODY=pkcs11) beside file custody, in the same run: file, pkcs11, file, pkcs11, each a fresh
// platform, its senders funded, then bursts of concurrent senders (bench/token-transfers.ts).
// `npx node bench/custody-transfers.ts [--senders=8] [--window-ms=4000] [--bursts=2]` prints one JSON line per run.
import { startBenchPlatform } from './bench-platform.ts';
import { startLoadClient } from './load-client.ts';
import { fundedSenders, summariseLevel, transferBurst } from './token-transfers.ts';
import { makeSoftToken } from '../test/support/softhsm.ts';

const argument = (name: string, fallback: number) => Number(process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const senders = argument('senders', 8);
const windowMs = argument('window-ms', 4000);
const bursts = argument('bursts', 2);

const soft = makeSoftToken('vixpay-bench');
const load = await startLoadClient();
try {
  for (const custody of ['file', 'pkcs11', 'file', 'pkcs11'] as const) {
    const env: Record<string, string> = custody === 'pkcs11'
      ? { KEY_CUSTODY: 'pkcs11', PKCS11_MODULE: soft.module, PKCS11_TOKEN_LABEL: soft.tokenLabel, PKCS11_PIN_FILE: soft.pinFile }
      : {};
    const bench = await startBenchPlatform({ env });
    try {
      const funded = await fundedSenders(bench, senders);
      await transferBurst(bench, load, funded.senders, funded.recipient, { windowMs: 1000, maxTotal: 1_000_000 }); // warm-up
      const runs = [];
      for (let i = 0; i < bursts; i++) runs.push(await transferBurst(bench, load, funded.senders, funded.recipient, { windowMs, maxTotal: 1_000_000 }));
      const level = summariseLevel(senders, runs);
      console.log(JSON.stringify({ custody, senders, transfersPerSecond: level.transfersPerSecond, p50Ms: level.p50Ms, p99Ms: level.p99Ms, failed: level.failed, firstError: level.firstError }));
    } finally {
      await bench.stop();
    }
  }
} finally {
  await load.stop();
  soft.close();
}
