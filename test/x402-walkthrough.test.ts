import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bsc, mainnet, opBNB, optimism } from 'viem/chains';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { freePort, rpcOver, startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';
import { testStoreEnv } from './support/stores.ts';
import { assertSameShape } from './support/doc-examples.ts';
import { curlRequest, readShellExamples, shellWords, type ShellExample } from './support/curl-examples.ts';
import { waitFor } from './support/wait-for.ts';
import { anvilChainIds } from '../src/shared/networks.ts';

// docs/x402.md's walkthrough, run as a reader runs it: the platform as `npm start` runs it, each
// `<!-- x402-example: NAME -->` command in the doc's order (the CLI, curl, the example files of
// docs/examples/x402/ with the variables the doc exports), and what each prints: the same JSON shape
// and fixed values, or the same lines once addresses, hashes, keys and ports are put aside. The doc
// embeds each example file as it is.

const doc = readFileSync('docs/x402.md', 'utf8');
const examples = readShellExamples(doc, 'x402-example');
const run = promisify(execFile);
const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-x402-doc-'));
const fixed = new Set(['x402Version', 'scheme', 'network', 'symbol', 'decimals', 'name', 'version', 'extensions', 'tid', 'ratePerSecond', 'revokedAt', 'status', 'amount', 'balance', 'balanceRaw', 'tokenSymbol']);
let server: ServerProcess;
let seller: ChildProcess | undefined;

before(async () => { server = await startServerProcess({ DATA_DIR: dataDir }); });
after(async () => {
  seller?.kill();
  if (server) await stopServerProcess(server);
  rmSync(dataDir, { recursive: true, force: true });
});

/** A line as it reads in any run: addresses, hashes, keys, payment ids and ports put aside. */
const normalised = (text: string) => text.trim().split('\n').map((line) => line
  .replace(/0x[0-9a-fA-F]+/g, '0x…').replace(/vxf_[\w-]+/g, 'vxf_…').replace(/pay_[0-9a-f]+/g, 'pay_…').replace(/(localhost|127\.0\.0\.1):\d+/g, '$1:PORT'));

test('docs/x402.md embeds every file of docs/examples/x402 as it is', () => {
  const embedded = [...doc.matchAll(/<!-- file: (docs\/examples\/x402\/[\w.-]+) -->\n```ts\n([\s\S]*?)```\n/g)];
  assert.deepEqual(embedded.map((m) => m[1]).sort(), readdirSync('docs/examples/x402').map((file) => `docs/examples/x402/${file}`).sort());
  for (const [, file, block] of embedded) assert.equal(block, readFileSync(file!, 'utf8'), `${file} as embedded`);
});

test('the network table names each network\'s eip155 id: the embedded chains\' and the public chains\'', () => {
  const rows = [...doc.matchAll(/^\| `(ethereum|optimism|bnb|opbnb)` \| `eip155:(\d+)` \| `eip155:(\d+)` \|/gm)];
  const publicIds = { ethereum: mainnet.id, optimism: optimism.id, bnb: bsc.id, opbnb: opBNB.id };
  assert.deepEqual(rows.map((r) => [r[1], Number(r[2]), Number(r[3])]),
    Object.entries(anvilChainIds).map(([network, id]) => [network, id, publicIds[network as keyof typeof publicIds]]));
});

test('the walkthrough runs as written: a seller and a buyer, funded, paying, looked up', async () => {
  assert.deepEqual(examples.map((e) => e.name), ['supported', 'facilitator-key', 'seller', 'new-buyer', 'mint', 'buyer', 'status', 'balance', 'buyer-with-id']);
  const sellerPort = await freePort();
  const vars: Record<string, string> = { PAY_TO: privateKeyToAddress(generatePrivateKey()) };
  // Where this run's platform and seller listen, instead of the doc's 8080 and 4021 (both scripts read these).
  const placed = { FACILITATOR_URL: `${server.baseUrl}/x402`, PORT: String(sellerPort), URL: `http://127.0.0.1:${sellerPort}/weather` };
  const storeEnv = await testStoreEnv(dataDir);
  const byName = new Map(examples.map((e) => [e.name, e]));
  const example = (name: string) => byName.get(name)!;

  const curl = async (e: ShellExample) => {
    const request = curlRequest(e.command, vars);
    const response = await fetch(`${server.baseUrl}${request.url}`, { method: request.method, headers: request.headers });
    assert.equal(response.status, 200, e.name);
    const body = await response.json();
    assertSameShape(JSON.parse(e.output.text), body, fixed);
    return body as any;
  };
  const vixpay = async (e: ShellExample) => {
    const [npx, program, ...args] = shellWords(e.command.trim(), vars) as string[];
    assert.deepEqual([npx, program], ['npx', 'vixpay'], e.name);
    const { stdout } = await run(process.execPath, ['bin/vixpay.js', ...args], { env: { ...process.env, DATA_DIR: dataDir, ...storeEnv, LOG_LEVEL: 'silent' } });
    const answer = JSON.parse(stdout);
    assertSameShape(JSON.parse(e.output.text), answer, fixed);
    return answer;
  };
  /** `npx node FILE` with the exported variables: what it printed, compared with the doc's block. */
  const script = async (e: ShellExample) => {
    const [file] = /docs\/examples\/x402\/[\w.-]+\.ts/.exec(e.command) ?? [];
    assert.ok(file, `${e.name} runs an example file`);
    const { stdout } = await run(process.execPath, [file], { env: { ...process.env, ...vars, ...placed }, timeout: 60_000 });
    assert.deepEqual(normalised(stdout), normalised(e.output.text), `${e.name} prints what the doc shows`);
    return stdout;
  };

  // Steps that do not wait for each other run together (the machine is shared, the test is kept short).
  // 1. The networks and their tokens, no key needed; 2. the seller's facilitator key; 3. a buyer account.
  const [supported, key, buyer] = await Promise.all([curl(example('supported')), vixpay(example('facilitator-key')), script(example('new-buyer'))]);
  vars.ASSET = supported.kinds[0].extra.assets[0].address;
  vars.VIXPAY_FACILITATOR_KEY = key.key;
  for (const [, name, value] of buyer.matchAll(/export (\w+)=(\S+)/g)) vars[name!] = value!;
  // 2. The seller with the doc's exports, while 4. the buyer is funded in whole tokens.
  const minted = vixpay(example('mint'));
  const sellerExample = example('seller');
  for (const line of sellerExample.command.split('\n').filter((l) => l.startsWith('export '))) {
    for (const [, name, value] of line.replace(/#.*/, '').matchAll(/([A-Z_]+)=(\S+)/g) as IterableIterator<[string, string, string]>) {
      if (value.includes('…')) assert.ok(vars[name], `$${name} is set from an earlier step`);
      else vars[name] = value;
    }
  }
  assert.match(sellerExample.command, /^npx node docs\/examples\/x402\/seller\.ts$/m);
  let sellerOutput = '';
  seller = spawn(process.execPath, ['docs/examples/x402/seller.ts'], { env: { ...process.env, ...vars, ...placed }, stdio: ['ignore', 'pipe', 'pipe'] });
  seller.stdout!.on('data', (d: Buffer) => { sellerOutput += d.toString(); });
  seller.stderr!.on('data', (d: Buffer) => { sellerOutput += d.toString(); });
  await waitFor(() => sellerOutput.includes('\n'), { timeoutMs: 30_000, message: 'the seller listens' });
  assert.deepEqual(normalised(sellerOutput), normalised(sellerExample.output.text));
  await minted;
  // 5. The purchase; the nonce it signed names it on the platform, and the seller logs the same.
  const bought = await script(example('buyer'));
  vars.NONCE = /nonce (0x[0-9a-f]{64})/.exec(bought)![1]!;
  const transaction = /settled in (0x[0-9a-f]{64})/.exec(bought)![1]!;
  await waitFor(() => sellerOutput.includes('settled '), { timeoutMs: 5_000, message: 'the seller logs the settlement' });
  assert.match(sellerOutput, new RegExp(`settled ${transaction} payer ${vars.BUYER_ADDRESS} nonce ${vars.NONCE}`));
  // Its status, with the seller's key; the buyer paid 0.01 of its 5 tokens.
  const [status] = await Promise.all([curl(example('status')), vixpay(example('balance'))]);
  assert.deepEqual([status.transaction, status.payer, status.nonce], [transaction, vars.BUYER_ADDRESS, vars.NONCE]);
  // 6. With a payment id: the same payment sent twice is served twice and charged once.
  const twice = await script(example('buyer-with-id'));
  const [first, again] = [...twice.matchAll(/settled in (0x[0-9a-f]{64})/g)].map((m) => m[1]);
  assert.ok(first && first === again, `the same settlement answered both times: ${twice}`);
  assert.equal((await rpcOver(server.baseUrl, '/token', 'getBalance', { address: vars.BUYER_ADDRESS })).resultData.balance, '4.98');
});
