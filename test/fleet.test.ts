import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { createClient } from 'redis';
import { startChains, type ChainSupervisor } from '../src/chain/chain-supervisor.ts';
import { createLogger } from '../src/shared/logger.ts';
import { anvilChainIds } from '../src/shared/networks.ts';
import { migrations } from '../src/store/migrations/index.ts';
import { startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';
import { freshPostgresSchema } from './support/store-factories.ts';
import { redisSkip, testRedisUrl } from './support/redis.ts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { balanceOf, newUser, openSession, paymentsClient, startPay, transferFor, type PaymentTest } from './support/payment-calls.ts';
import { waitFor } from './support/wait-for.ts';
import { deterministicBytes } from './support/deterministic-bytes.ts';
import { boundary, multipartBody, type TestPart } from './support/ipfs-http.ts';

/**
 * Many `vixpay serve` processes on one PostgreSQL schema and one Redis, as scaled out: three cold-start
 * at once on an empty schema, beside one in-process instance of the same fleet (the test's hands:
 * users, stores, tokens). The chains are four anvils every instance reaches by RPC URL; the relayer is
 * anvil's funded first account. IPFS: the fleet's blocks in its PostgreSQL (IPFS_BLOCKSTORE=postgres),
 * no Kubo node: a file added through one instance is read through the others.
 */
const skipRedis = await redisSkip();
const execFileAsync = promisify(execFile);
/** anvil's first default account: funded on every anvil. */
const anvilKey = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

interface Instance { server: ServerProcess; grpcPort: number; dataDir: string }

let chains: ChainSupervisor;
let chainDir: string;
let schema: Awaited<ReturnType<typeof freshPostgresSchema>>;
let env: Record<string, string>;
let instances: Instance[] = [];
let t: TestPlatform;
const dirs: string[] = [];

const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-fleet-'));
  dirs.push(dir);
  return dir;
};

async function startInstance(extra: Record<string, string> = {}, base = env): Promise<Instance> {
  const dataDir = tempDir();
  const server = await startServerProcess({ ...base, DATA_DIR: dataDir, ...extra }, 240_000);
  return { server, grpcPort: server.grpcPort, dataDir };
}

const post = (instance: Instance, url: string, body: unknown) => fetch(`${instance.server.baseUrl}${url}`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
});
const getJson = async (instance: Instance, url: string) => (await fetch(`${instance.server.baseUrl}${url}`)).json() as Promise<any>;
const login = (instance: Instance, id: string, password: string) => post(instance, '/v2/auth/auth-user', { id, password });
/** A token refresh: answers 200 only when the instance accepts `token` (signature, key, expiry). */
const refresh = (instance: Instance, id: string, token: string) => post(instance, '/v2/auth/auth-user', { id, token });
const kidOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid as string;

/** `vixpay <args>` against the fleet's database, as an operator runs it. */
async function vixpay(...args: string[]): Promise<any> {
  const { stdout } = await execFileAsync(process.execPath, ['bin/vixpay.js', ...args, '--json'], {
    env: { ...process.env, ...env, DATA_DIR: tempDir(), LOG_LEVEL: 'warn' },
  });
  return JSON.parse(stdout);
}

describe('many instances on one PostgreSQL and one Redis', { skip: skipRedis }, () => {
  before(async () => {
    chainDir = tempDir();
    chains = await startChains({ dataDir: chainDir, rpcUrls: {}, chainIds: anvilChainIds, logger: createLogger('silent'), mode: 'own', checkpointIntervalMs: 60_000 });
    schema = await freshPostgresSchema('vixpay_fleet');
    env = {
      DATABASE_URL: schema.databaseUrl,
      REDIS_URL: testRedisUrl,
      MASTER_KEY: randomBytes(32).toString('hex'),
      RELAYER_PRIVATE_KEY: anvilKey,
      RELAYER_LANES: '1',
      IPFS_BLOCKSTORE: 'postgres',
      RPC_URL_ETHEREUM: chains.endpoints.ethereum.url,
      RPC_URL_OPTIMISM: chains.endpoints.optimism.url,
      RPC_URL_BNB: chains.endpoints.bnb.url,
      RPC_URL_OPBNB: chains.endpoints.opbnb.url,
      // Anvils standing for the four networks: their own chain ids.
      CHAIN_ID_ETHEREUM: String(anvilChainIds.ethereum), CHAIN_ID_OPTIMISM: String(anvilChainIds.optimism),
      CHAIN_ID_BNB: String(anvilChainIds.bnb), CHAIN_ID_OPBNB: String(anvilChainIds.opbnb),
      PAYMENT_IDLE_TIMEOUT_SECONDS: '60',
      PAYMENT_PAIRING_WINDOW_SECONDS: '60',
    };
    // Three instances cold-starting at once on the empty schema.
    instances = await Promise.all([0, 1, 2].map(() => startInstance()));
    t = await startTestPlatform({ env });
  });
  after(async () => {
    // Those killed by a test already exited (on a signal: no exit code, and no second 'exit' to wait for).
    const running = instances.filter(({ server }) => server.child.exitCode === null && server.child.signalCode === null);
    await Promise.all(running.map((instance) => stopServerProcess(instance.server, 'SIGKILL')));
    await t?.stop();
    await chains?.stop();
    await schema?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('three instances cold-started at once are all ready, with one system issuer and verifier and every migration applied once', async () => {
    for (const instance of instances) {
      let last = '';
      await waitFor(async () => {
        const response = await fetch(`${instance.server.baseUrl}/readyz`);
        last = `${response.status} ${await response.text()}`;
        return response.status === 200;
      }, { timeoutMs: 20_000, message: `${instance.server.baseUrl}/readyz 200` }).catch((error: Error) => assert.fail(`${error.message}; last: ${last}`));
    }
    const issuers = await Promise.all(instances.map((instance) => getJson(instance, '/v2/did/issuers')));
    const verifiers = await Promise.all(instances.map((instance) => getJson(instance, '/v2/did/verifiers')));
    for (const list of [...issuers, ...verifiers]) assert.equal(list.length, 1, JSON.stringify(list));
    assert.equal(new Set(issuers.map((list) => JSON.stringify(list))).size, 1, 'every instance names the same issuer');
    assert.equal(new Set(verifiers.map((list) => JSON.stringify(list))).size, 1, 'every instance names the same verifier');
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(t.platform.store.db);
    assert.deepEqual(applied.rows.map((row) => row.name), Object.keys(migrations).sort());
  });

  test('a token issued by instance A is accepted by B and C, and every instance serves the same JWKS', async () => {
    const user = await newUser({ t });
    const loggedIn = await login(instances[0]!, user.userId, 'correct horse battery');
    assert.equal(loggedIn.status, 200);
    const { token } = await loggedIn.json() as { token: string };
    for (const instance of instances.slice(1)) assert.equal((await refresh(instance, user.userId, token)).status, 200);
    const jwks = await Promise.all(instances.map((instance) => getJson(instance, '/.well-known/jwks.json')));
    assert.equal(new Set(jwks.map((set) => JSON.stringify(set))).size, 1);
    assert.deepEqual(jwks[0].keys.map((key: { kid: string }) => key.kid), [kidOf(token)]);
  });

  test('a file added through instance A is read whole through B and C, with Kubo\'s CIDs and no IPFS node', async () => {
    const user = await newUser({ t });
    const { token } = await (await login(instances[0]!, user.userId, 'correct horse battery')).json() as { token: string };
    const authorization = `Bearer ${token}`;
    const data = deterministicBytes(1024 * 1024 + 3, 'fleet-content');
    const add = async (instance: Instance, parts: TestPart[]) => {
      const response = await fetch(`${instance.server.baseUrl}/v1/ipfs/add`, {
        method: 'POST', headers: { authorization, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: multipartBody(parts),
      });
      assert.equal(response.status, 200, await response.clone().text());
      return ((await response.json()) as { cid: string }).cid;
    };
    const cid = await add(instances[0]!, [{ filename: 'fleet.bin', data }]);
    assert.equal(await add(instances[0]!, [{ filename: 'hello.txt', data: 'hello world\n' }]), 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'); // Kubo
    for (const instance of instances.slice(1)) {
      const read = await fetch(`${instance.server.baseUrl}/v1/ipfs/${cid}/get`, { headers: { authorization } });
      assert.equal(read.status, 200, instance.server.baseUrl);
      assert.deepEqual(new Uint8Array(await read.arrayBuffer()), data);
      const hello = await fetch(`${instance.server.baseUrl}/v1/ipfs/QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o/get`, { headers: { authorization } });
      assert.equal(await hello.text(), 'hello world\n');
    }
  });

  test('vixpay keys rotate: tokens signed before stay valid everywhere, and every JWKS lists the old and the new key', async () => {
    const user = await newUser({ t });
    const { token } = await (await login(instances[1]!, user.userId, 'correct horse battery')).json() as { token: string };
    const rotation = await vixpay('keys', 'rotate');
    // The output docs/operations.md shows.
    assert.deepEqual(Object.keys(rotation).sort(), ['kid', 'retired', 'retiredAt', 'retiredVerifyFor', 'signingWithin']);
    assert.match(rotation.kid, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(rotation.retired, [kidOf(token)]);
    for (const instance of instances) {
      const kids = (await getJson(instance, '/.well-known/jwks.json')).keys.map((key: { kid: string }) => key.kid);
      assert.deepEqual(kids, [rotation.kid, kidOf(token)], instance.server.baseUrl);
      assert.equal((await refresh(instance, user.userId, token)).status, 200, 'a token of the retired key still verifies');
    }
    // A token the new key signed (an instance that took it up) verifies on every instance at once.
    await t.platform.identity.jwt.reloadKeys();
    const fresh = (await t.platform.identity.jwt.issueAccessToken(user.userId)).token;
    assert.equal(kidOf(fresh), rotation.kid);
    for (const instance of instances) assert.equal((await refresh(instance, user.userId, fresh)).status, 200);
  });

  test('the login throttle is shared: five failed passwords spread over the instances lock the account on all of them', async () => {
    const user = await newUser({ t });
    for (const instance of [0, 1, 2, 0, 1].map((index) => instances[index]!)) {
      assert.equal((await login(instance, user.userId, 'wrong password')).status, 401);
    }
    for (const instance of instances) {
      const refused = await login(instance, user.userId, 'correct horse battery');
      assert.equal(refused.status, 429, instance.server.baseUrl);
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
    }
    // Kept under the fleet's own id: another deployment (or test run) sharing the Redis counts apart.
    const fleetId = (await t.platform.store.db.selectFrom('fleet').select('fingerprint').where('name', '=', 'fleet_id').executeTakeFirstOrThrow()).fingerprint;
    const client = createClient({ url: testRedisUrl });
    await client.connect();
    try {
      assert.equal(await client.zCard(`vixpay:login:${fleetId}:id:${user.userId}`), 5);
    } finally {
      await client.close();
    }
  });

  test('an instance with another MASTER_KEY (or none), another relayer key, or embedded IPFS refuses to start and says why', async () => {
    const otherKey = randomBytes(32).toString('hex');
    await assert.rejects(startInstance({ MASTER_KEY: otherKey }), (error: Error) => {
      assert.match(error.message, /master key differs from the fleet's: give every instance the same MASTER_KEY/);
      assert.doesNotMatch(error.message, new RegExp(otherKey));
      assert.doesNotMatch(error.message, new RegExp(env.MASTER_KEY!));
      return true;
    });
    // Without MASTER_KEY an instance makes its own DATA_DIR/master.key: refused at start, not at first use.
    const { MASTER_KEY: _master, ...withoutMasterKey } = env;
    await assert.rejects(startInstance({}, withoutMasterKey), /master key differs from the fleet's/);
    const anvilSecondKey = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
    await assert.rejects(startInstance({ RELAYER_PRIVATE_KEY: anvilSecondKey }), (error: Error) => {
      assert.match(error.message, /relayer account differs from the fleet's: give every instance the same RELAYER_PRIVATE_KEY/);
      assert.doesNotMatch(error.message, new RegExp(anvilSecondKey.slice(2)));
      return true;
    });
    const { IPFS_BLOCKSTORE: _shared, ...embedded } = env;
    await assert.rejects(startInstance({}, embedded), /embedded IPFS \(IPFS_API_URL unset\)[^\n]*other instances already run on this database/);
  });

  for (const dies of ['POS', 'app'] as const) {
    test(`a cross-instance payment whose ${dies}'s instance is killed (-9): the other stream ends with END_PAY 01 within seconds`, async (context) => {
      const [appSide, posSide] = dies === 'POS' ? [instances[0]!, instances[1]!] : [instances[2]!, instances[0]!];
      const p = { t } as PaymentTest;
      const store = await t.platform.payments.addStore({ tid: `T-FL${randomUUID().slice(0, 4)}`, name: 'Fleet Cafe' });
      await t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
      const user = await newUser({ t }, '100');
      const uuid = randomUUID();
      const appClient = paymentsClient(appSide.grpcPort);
      const posClient = paymentsClient(posSide.grpcPort);
      try {
        const app = openSession(appClient, 'DoPayment', user.token);
        app.send({ state: 'START_PAY', user_uuid: uuid });
        await untilAppRegistered(uuid);
        const pos = openSession(posClient, 'StartPayment', store.apiKey);
        const tranNo = `TR${randomUUID().slice(0, 8)}`;
        pos.send(startPay(p, store.tid, tranNo, user, uuid, '1500'));
        assert.equal((await app.next()).content.state, 'REQUEST_TRANSFER');
        assert.equal((await pos.next()).content.state, 'REQUEST_TRANSFER');

        const [killed, survivor] = dies === 'POS' ? [posSide, app] : [appSide, pos];
        await stopServerProcess(killed.server, 'SIGKILL');
        const killedAt = performance.now();
        const end = await survivor.next(15_000);
        context.diagnostic(`the ${dies === 'POS' ? 'app' : 'POS'} heard of the kill after ${Math.round(performance.now() - killedAt)} ms`);
        assert.equal(end.content.state, 'END_PAY');
        assert.equal(end.common.res_code, '01', JSON.stringify(end.common));
        assert.equal(end.common.res_message, 'Canceled by the user');

        if (dies === 'POS') {
          // The POS retries the tran_no on a surviving instance at once: the attempt its dead instance
          // left pending is settled (nothing moved), not answered 13, and the retry is paid once.
          const retryClient = paymentsClient(instances[2]!.grpcPort);
          try {
            const app2 = openSession(appClient, 'DoPayment', user.token);
            app2.send({ state: 'START_PAY', user_uuid: uuid });
            await untilAppRegistered(uuid);
            const retry = openSession(retryClient, 'StartPayment', store.apiKey);
            retry.send(startPay(p, store.tid, tranNo, user, uuid, '1500'));
            const request = await app2.next();
            assert.equal(request.content.state, 'REQUEST_TRANSFER', JSON.stringify(request.common));
            assert.equal((await retry.next()).content.state, 'REQUEST_TRANSFER');
            app2.send(await transferFor(p, user, request));
            const paid = await retry.next();
            assert.equal(paid.common.res_code, '00', JSON.stringify(paid.common));
            assert.equal(paid.content.state, 'END_PAY');
            assert.equal(await balanceOf(p, user.address), '99');
            assert.equal((await t.platform.payments.findPayment(store.tid, tranNo))?.status, 'approved');
          } finally {
            retryClient.close();
          }
        }
      } finally {
        appClient.close();
        posClient.close();
      }
    });
  }
});

/** Until the app's DoPayment is registered in Redis (the desk's default prefix). */
async function untilAppRegistered(userUuid: string): Promise<void> {
  const client = createClient({ url: testRedisUrl });
  await client.connect();
  try {
    await waitFor(async () => (await client.exists(`vixpay:pairing:app:${userUuid}`)) === 1, { timeoutMs: 10_000, message: `app ${userUuid} registered` });
  } finally {
    await client.close();
  }
}
