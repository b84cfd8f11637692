// Token-API transfers per second and p99 with the relayer's and the wallets' keys in a SoftHSM2 token
// (KEY_CUSTODY=pkcs11) beside file custody, in the same run: file, pkcs11, file, pkcs11, each a fresh
// platform, its senders funded, then bursts of concurrent senders (bench/token-transfers.ts).
// `npx node bench/custody-transfers.ts [--senders=8] [--window-ms=4000] [--bursts=2] [--rounds=2] [--custodies=file,pkcs11]`
// prints one JSON line per run. `--custodies` picks and orders them (one alone, e.g. under `node --cpu-prof`);
// `pkcs11-unwrap-each` is pkcs11 with PKCS11_UNWRAPPED_KEYS=0 (each wallet signature unwraps its key).
import { readFileSync } from 'node:fs';
import { startBenchPlatform } from './bench-platform.ts';
import { startLoadClient } from './load-client.ts';
import { fundedSenders, summariseLevel, transferBurst } from './token-transfers.ts';
import { makeSoftToken } from '../test/support/softhsm.ts';

const argument = (name: string, fallback: number) => Number(process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const senders = argument('senders', 8);
const windowMs = argument('window-ms', 4000);
const bursts = argument('bursts', 2);
const rounds = argument('rounds', 2);
const known = ['file', 'pkcs11', 'pkcs11-unwrap-each'] as const;
const custodies = (process.argv.find((arg) => arg.startsWith('--custodies='))?.split('=')[1] ?? 'file,pkcs11').split(',').map((name) => {
  const custody = known.find((candidate) => candidate === name);
  if (!custody) throw new Error(`--custodies: ${name} is none of ${known.join(', ')}`);
  return custody;
});

/** The main thread's CPU time in ms (Linux /proc: utime + stime, 10 ms ticks), or undefined elsewhere. */
function mainThreadCpuMs(): number | undefined {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

const soft = makeSoftToken('vixpay-bench');
const load = await startLoadClient();
try {
  for (const custody of Array.from({ length: rounds }, () => custodies).flat()) {
    const env: Record<string, string> = custody === 'file' ? {} : {
      KEY_CUSTODY: 'pkcs11', PKCS11_MODULE: soft.module, PKCS11_TOKEN_LABEL: soft.tokenLabel, PKCS11_PIN_FILE: soft.pinFile,
      ...(custody === 'pkcs11-unwrap-each' && { PKCS11_UNWRAPPED_KEYS: '0' }),
    };
    const bench = await startBenchPlatform({ env });
    try {
      const funded = await fundedSenders(bench, senders);
      await transferBurst(bench, load, funded.senders, funded.recipient, { windowMs: 1000, maxTotal: 1_000_000 }); // warm-up
      const runs = [];
      // The platform's CPU (this process, its main thread and the token's calls on libuv's threads) per transfer.
      const cpu = process.cpuUsage();
      const mainBefore = mainThreadCpuMs();
      for (let i = 0; i < bursts; i++) runs.push(await transferBurst(bench, load, funded.senders, funded.recipient, { windowMs, maxTotal: 1_000_000 }));
      const used = process.cpuUsage(cpu);
      const mainAfter = mainThreadCpuMs();
      const level = summariseLevel(senders, runs);
      const completed = level.completed.reduce((sum, n) => sum + n, 0);
      const perTransfer = (ms: number) => Math.round(ms / completed * 10) / 10;
      const cpuMsPerTransfer = {
        process: perTransfer((used.user + used.system) / 1000),
        ...(mainBefore !== undefined && mainAfter !== undefined && { mainThread: perTransfer(mainAfter - mainBefore) }),
      };
      console.log(JSON.stringify({ custody, senders, transfersPerSecond: level.transfersPerSecond, p50Ms: level.p50Ms, p99Ms: level.p99Ms, cpuMsPerTransfer, failed: level.failed, firstError: level.firstError }));
    } finally {
      await bench.stop();
    }
  }
} finally {
  await load.stop();
  soft.close();
}
