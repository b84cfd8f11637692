import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createPublicClient, http, parseEther, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type AnvilProcess } from '../src/chain/anvil-process.ts';
import { loadRelayerLanes } from '../src/chain/platform-account.ts';
import { startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';
import { testStoreEnv } from './support/stores.ts';
import { waitFor } from './support/wait-for.ts';

// An operator on a node the platform does not run: ethereum is an anvil of the test's own where only
// the treasury (anvil's funded first account, lane 0) has gas. The server says once that the other
// lanes are low, /readyz and /metrics say it all along, a CLI command beside it does not repeat it,
// and `vixpay lanes fund` moves exactly the amount asked from the treasury to each lane.
const run = promisify(execFile);
const anvilKey = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-lanes-'));
const storeEnv = await testStoreEnv(dataDir);
const lanes = loadRelayerLanes({ privateKey: anvilKey, dataDir, vault: undefined as never, count: 4 }).map((lane) => lane.address);
const treasury = privateKeyToAccount(anvilKey).address;
const lowLine = /relayer gas balance is low/;
let node: AnvilProcess;
let server: ServerProcess;
let env: Record<string, string>;

before(async () => {
  node = await startAnvil({ chainId: foundry.id, port: 0 });
  env = { DATA_DIR: dataDir, RELAYER_PRIVATE_KEY: anvilKey, RELAYER_LANES: '4', RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337' };
  server = await startServerProcess(env);
});
after(async () => {
  if (server) await stopServerProcess(server);
  await node?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const client = () => createPublicClient({ chain: foundry, transport: http(node.url) });

/** `vixpay ARGS --json` beside the server: exit code, the JSON it printed, what it wrote to stderr. */
async function vixpay(...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['bin/vixpay.js', ...args, '--json'], {
      env: { ...process.env, ...env, ...storeEnv, LOG_LEVEL: 'warn' }, timeout: 120_000,
    });
    return { code: 0, json: JSON.parse(stdout), stderr };
  } catch (error: any) {
    return { code: error.code as number, json: error.stdout ? JSON.parse(error.stdout) : undefined, stderr: error.stderr as string };
  }
}

const readyz = async () => (await fetch(`${server.baseUrl}/readyz`)).json() as Promise<any>;
const gasLow = async (lane: number) => {
  const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
  return new RegExp(`^vixpay_relayer_lane_gas_low\\{network="ethereum",lane="${lane}"\\} (\\d)$`, 'm').exec(metrics)?.[1];
};

test('lanes low on an external node: one line from the server, said by /readyz and /metrics, not by a CLI command', async () => {
  const said = server.output().split('\n').filter((line) => lowLine.test(line));
  assert.equal(said.length, 1, server.output());
  const line = JSON.parse(said[0]!);
  assert.deepEqual(line.lanes.map((l: any) => [l.network, l.lane, l.address, l.balance]), [1, 2, 3].map((i) => ['ethereum', i, lanes[i], '0']));
  assert.match(line.msg, /fund them with `vixpay lanes fund --network ethereum --amount X`/);

  const ready = await readyz();
  assert.equal(ready.status, 'ready', 'low gas is a warning, not a reason to take the instance out');
  assert.match(ready.warnings.gas, new RegExp(`^relayer gas under 100: ethereum lane 1 \\(${lanes[1]}\\) 0; ethereum lane 2 .*; fund with`));
  assert.doesNotMatch(ready.warnings.gas, /lane 0|optimism|bnb/, 'the treasury and the networks we run have gas');
  assert.equal(await gasLow(1), '1');
  assert.equal(await gasLow(0), '0');

  const beside = await vixpay('lanes', 'list', '--network', 'ethereum');
  assert.equal(beside.code, 0, beside.stderr);
  assert.doesNotMatch(beside.stderr, lowLine, 'a CLI command does not repeat the warning');
  assert.deepEqual(beside.json.lanes.map((l: any) => [l.lane, l.address, l.low]), lanes.map((address, i) => [i, address, i !== 0]));
});

test('vixpay lanes fund refuses bad input with the CLI\'s errors and sends nothing', async () => {
  const nonce = await client().getTransactionCount({ address: treasury });
  for (const [args, code, errorCode] of [
    [['--network', 'ethereum', '--amount', '1e3'], 1, 'request.invalid'],
    [['--network', 'ethereum', '--amount=-1'], 1, 'request.invalid'],
    [['--network', 'ethereum', '--amount', '0'], 1, 'request.invalid'],
    [['--network', 'ethereum', '--amount', '0.1234567890123456789'], 1, 'request.invalid'],
    [['--network', 'ethereum', '--amount', '1,5'], 1, 'request.invalid'],
    [['--network', 'ethereum'], 1, 'request.invalid'],
    [['--amount', '1'], 1, 'request.invalid'],
    [['--network', 'mars', '--amount', '1'], 1, 'network.unknown'],
    [['--network', 'ethereum', '--amount', '1', '--lane', '0'], 1, 'request.invalid'],
    [['--network', 'ethereum', '--amount', '1', '--lane', '4'], 1, 'request.invalid'],
  ] as const) {
    const result = await vixpay('lanes', 'fund', ...args);
    assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
    assert.equal(result.json.error.code, errorCode, args.join(' '));
  }
  assert.equal(await client().getTransactionCount({ address: treasury }), nonce, 'nothing sent');
});

test('vixpay lanes fund sends exactly the amount from the treasury to each lane; the warning goes away', async () => {
  const chain = client();
  const before = await chain.getBalance({ address: treasury });
  const result = await vixpay('lanes', 'fund', '--network', 'ethereum', '--amount', '150.000000000000000001');
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, lowLine);
  const wei = parseEther('150.000000000000000001');
  assert.deepEqual(result.json.lanes.map((l: any) => [l.lane, l.address, l.amount, l.status, l.balance]),
    [1, 2, 3].map((i) => [i, lanes[i], '150.000000000000000001', 'confirmed', '150.000000000000000001']));
  let fees = 0n;
  for (const [i, funded] of (result.json.lanes as Array<{ transactionId: Hex; address: Address }>).entries()) {
    assert.equal(await chain.getBalance({ address: lanes[i + 1]! }), wei, 'the lane holds exactly the amount');
    const receipt = await chain.getTransactionReceipt({ hash: funded.transactionId });
    const tx = await chain.getTransaction({ hash: funded.transactionId });
    assert.equal(receipt.from.toLowerCase(), treasury.toLowerCase());
    assert.equal(receipt.to?.toLowerCase(), funded.address.toLowerCase());
    assert.equal(tx.value, wei);
    assert.equal(receipt.gasUsed, 21_000n, 'a plain transfer of the native coin');
    fees += receipt.gasUsed * receipt.effectiveGasPrice;
  }
  assert.equal(await chain.getBalance({ address: treasury }), before - 3n * wei - fees, 'the treasury paid the amounts and the fees, nothing else');
  assert.equal(result.json.treasury.address, treasury);

  // One lane alone.
  const one = await vixpay('lanes', 'fund', '--network', 'ethereum', '--amount', '0.5', '--lane', '2');
  assert.equal(one.code, 0, one.stderr);
  assert.deepEqual(one.json.lanes.map((l: any) => [l.lane, l.balance]), [[2, '150.500000000000000001']]);

  // The balances are read again within 5 s: /readyz and the metric say the lanes are funded.
  await waitFor(async () => (await readyz()).warnings === undefined, { timeoutMs: 30_000, message: '/readyz drops the gas warning', intervalMs: 500 });
  assert.equal(await gasLow(1), '0');
});
