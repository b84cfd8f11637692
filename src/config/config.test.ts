import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { ConfigError, defaultHostLabels, envSchema, loadConfig, parseTrustProxy } from './config.ts';

test('TRUST_PROXY takes a hop count or proxy addresses/CIDRs, never "every hop"', () => {
  assert.equal(parseTrustProxy(undefined), false);
  assert.equal(parseTrustProxy('false'), false);
  assert.equal(parseTrustProxy('0'), false);
  assert.equal(parseTrustProxy('1'), 1);
  assert.equal(parseTrustProxy(' 2 '), 2);
  assert.deepEqual(parseTrustProxy('10.0.0.0/8, 192.168.1.7,::1,fd00::/8,loopback'), ['10.0.0.0/8', '192.168.1.7', '::1', 'fd00::/8', 'loopback']);
  assert.throws(() => parseTrustProxy('true'), /every hop/);
  assert.throws(() => parseTrustProxy('10.0.0.0/33'), /10\.0\.0\.0\/33/);
  assert.throws(() => parseTrustProxy('proxy.example'), /proxy\.example/);
  assert.throws(() => parseTrustProxy('1000'), /hop count/);
  assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
});

test('X402_EIP6492_FACTORIES is a list of addresses, each once, checked exactly: none by default', () => {
  assert.deepEqual(loadConfig({}).x402Eip6492Factories, []);
  assert.deepEqual(loadConfig({ X402_EIP6492_FACTORIES: '' }).x402Eip6492Factories, []);
  const safeFactory = '0x4e1DCf7AD4e460CfD30791CCC4F9c8a4f820ec67';
  const other = '0x000000000000000000000000000000000000dead';
  assert.deepEqual(loadConfig({ X402_EIP6492_FACTORIES: `${safeFactory.toLowerCase()}, ${other}` }).x402Eip6492Factories,
    [safeFactory, '0x000000000000000000000000000000000000dEaD']);
  for (const [text, problem] of [
    ['0x4e1DCf7AD4e460CfD30791CCC4F9c8a4f820EC67', /"0x4e1DCf7AD4e460CfD30791CCC4F9c8a4f820EC67" is not a 0x address/], // mixed case, its checksum wrong
    ['0x1234', /"0x1234" is not a 0x address/],
    [`${safeFactory},`, /"" is not a 0x address/],
    [`${safeFactory},${safeFactory.toLowerCase()}`, /listed twice/],
  ] as const) {
    assert.throws(() => loadConfig({ X402_EIP6492_FACTORIES: text }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 1);
      assert.match(error.problems[0]!, /^X402_EIP6492_FACTORIES: /);
      assert.match(error.problems[0]!, problem);
      return true;
    }, text);
  }
});

test('a bad configuration names every bad setting, one line each', () => {
  assert.throws(
    () => loadConfig({ HTTP_PORT: 'eighty', TRUST_PROXY: 'true', MASTER_KEY: 'short', HOST_LABELS: 'api=mars' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.problems.map((p) => p.slice(0, p.indexOf(':'))).sort(), ['HOST_LABELS', 'HTTP_PORT', 'MASTER_KEY', 'TRUST_PROXY']);
      assert.equal(error.message.split('\n').length, 4);
      for (const line of error.message.split('\n')) assert.match(line, /^invalid configuration: [A-Z_]+: \S/);
      assert.doesNotMatch(error.message, /short/, 'a secret setting is not echoed');
      return true;
    },
  );
});

test('each setting is read once, under its own name, with its durations in milliseconds too', () => {
  const config = loadConfig({
    RECEIPT_TIMEOUT_SECONDS: '7', REWARD_LIFETIME_DAYS: '2', MAX_FEE_PER_GAS_GWEI: '1.5', DATA_DIR: 'here',
    RPC_URL_BNB: 'http://127.0.0.1:8545', CONFIRMATIONS: '3', CONFIRMATIONS_OPBNB: '5', HOST_LABELS: 'API=bnb',
  });
  assert.equal(config.receiptTimeoutSeconds, 7);
  assert.equal(config.receiptTimeoutMs, 7000);
  assert.equal(config.rewardLifetimeMs, 2 * 86_400_000);
  assert.equal(config.maxFeePerGasWei, 1_500_000_000n);
  assert.equal(config.webhookPollMs, 1000);
  assert.equal(config.dataDir, path.resolve('here'));
  assert.deepEqual(config.rpcUrls, { bnb: ['http://127.0.0.1:8545'] });
  assert.deepEqual(config.confirmations, { ethereum: 3, optimism: 3, bnb: 3, opbnb: 5 });
  assert.deepEqual(config.hostLabels, { api: 'bnb' });
  assert.deepEqual(loadConfig({}).hostLabels, defaultHostLabels);
  // Every other setting is there by its camelCase name: FOO_BAR is config.fooBar.
  const perNetwork = /^(RPC_URLS?|WS_URL|CHAIN_ID|CONTRACTS|CONFIRMATIONS|EIP7702)(_[A-Z]+)?$/;
  const defaults = loadConfig({});
  for (const name of Object.keys(envSchema.shape).filter((name) => !perNetwork.test(name))) {
    const key = name.toLowerCase().replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
    assert.ok(key in defaults, `${name} is config.${key}`);
  }
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.rpcUrls));
});

test('FAILPOINTS arm only in a test process (VIXPAY_TEST_FAULTS=1), never with NODE_ENV=production', () => {
  const refused = (env: Record<string, string>, setting: string) => assert.throws(() => loadConfig(env), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(error.problems.map((p) => p.slice(0, p.indexOf(':'))), [setting]);
    return true;
  });
  refused({ FAILPOINTS: 'payment.after-transfer=crash' }, 'FAILPOINTS');
  refused({ FAILPOINTS: 'payment.after-transfer=crash', VIXPAY_TEST_FAULTS: '0' }, 'FAILPOINTS');
  refused({ FAILPOINTS: 'payment.after-transfer=crash', VIXPAY_TEST_FAULTS: '1', NODE_ENV: 'production' }, 'VIXPAY_TEST_FAULTS');
  refused({ VIXPAY_TEST_FAULTS: '1', NODE_ENV: 'production' }, 'VIXPAY_TEST_FAULTS');
  refused({ VIXPAY_TEST_FAULTS: 'yes' }, 'VIXPAY_TEST_FAULTS');
  const armed = loadConfig({ FAILPOINTS: 'payment.after-transfer=crash', VIXPAY_TEST_FAULTS: '1', NODE_ENV: 'test' });
  assert.deepEqual(Object.fromEntries(armed.failpoints), { 'payment.after-transfer': 'crash' });
  assert.equal(loadConfig({ FAILPOINTS: '' }).failpoints.size, 0, 'empty is unset');
  assert.equal(loadConfig({ NODE_ENV: 'production' }).vixpayTestFaults, false);
});

test('KEY_CUSTODY=pkcs11 needs the token\'s module, label and PIN file, and refuses a relayer or master key of its own', () => {
  assert.equal(loadConfig({}).keyCustody, 'file');
  assert.throws(() => loadConfig({ KEY_CUSTODY: 'pkcs11', PKCS11_TOKEN_LABEL: 'vixpay' }), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(error.problems.map((p) => p.slice(0, p.indexOf(':'))), ['PKCS11_MODULE', 'PKCS11_PIN_FILE']);
    return true;
  });
  const token = { KEY_CUSTODY: 'pkcs11', PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so', PKCS11_TOKEN_LABEL: 'vixpay', PKCS11_PIN_FILE: 'pin' };
  assert.throws(() => loadConfig({ ...token, RELAYER_PRIVATE_KEY: `0x${'11'.repeat(32)}` }), /RELAYER_PRIVATE_KEY: not used with KEY_CUSTODY=pkcs11 .*keys migrate --to pkcs11/);
  assert.throws(() => loadConfig({ ...token, MASTER_KEY: '22'.repeat(32) }), /MASTER_KEY: not used with KEY_CUSTODY=pkcs11 .*keys migrate --to pkcs11/);
  // The migration's own settings: file custody's keys and the token's, together.
  assert.equal(loadConfig({ ...token, KEY_CUSTODY: 'file', MASTER_KEY: '22'.repeat(32), RELAYER_PRIVATE_KEY: `0x${'11'.repeat(32)}` }).pkcs11TokenLabel, 'vixpay');
  assert.throws(() => loadConfig({ KEY_CUSTODY: 'kms' }), /KEY_CUSTODY/);
  const config = loadConfig(token);
  assert.deepEqual([config.keyCustody, config.pkcs11Module, config.pkcs11TokenLabel, config.pkcs11PinFile],
    ['pkcs11', '/usr/lib/softhsm/libsofthsm2.so', 'vixpay', path.resolve('pin')]);
});

test('the server refuses to start with FAILPOINTS outside a test, or with the test switch in production', () => {
  const start = (env: Record<string, string>) => spawnSync(process.execPath, ['src/main.ts'], {
    encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(tmpdir(), 'vixpay-never-started'), ...env },
  });
  const withoutSwitch = start({ FAILPOINTS: 'payment.after-transfer=crash' });
  assert.equal(withoutSwitch.status, 2);
  assert.match(withoutSwitch.stderr, /^vixpay: invalid configuration: FAILPOINTS: test only/m);
  const inProduction = start({ FAILPOINTS: 'payment.after-transfer=crash', VIXPAY_TEST_FAULTS: '1', NODE_ENV: 'production' });
  assert.equal(inProduction.status, 2);
  assert.match(inProduction.stderr, /^vixpay: invalid configuration: VIXPAY_TEST_FAULTS: test only, refused with NODE_ENV=production/m);
});

test('by default the servers listen on this machine only; HTTP_HOST and GRPC_HOST open them', () => {
  const dataDir = path.join(tmpdir(), 'vixpay-config-hosts');
  const local = loadConfig({ DATA_DIR: dataDir });
  assert.equal(local.httpHost, '127.0.0.1');
  assert.equal(local.grpcHost, '127.0.0.1');
  const open = loadConfig({ DATA_DIR: dataDir, HTTP_HOST: '0.0.0.0', GRPC_HOST: '0.0.0.0' });
  assert.equal(open.httpHost, '0.0.0.0');
  assert.equal(open.grpcHost, '0.0.0.0');
});

test('IPFS_BLOCKSTORE=postgres needs DATABASE_URL and no IPFS_API_URL; unset, blocks go to DATA_DIR', () => {
  assert.equal(loadConfig({}).ipfsBlockstore, 'file');
  const databaseUrl = 'postgres://vixpay@db.internal:5432/vixpay';
  assert.equal(loadConfig({ IPFS_BLOCKSTORE: 'postgres', DATABASE_URL: databaseUrl }).ipfsBlockstore, 'postgres');
  assert.throws(() => loadConfig({ IPFS_BLOCKSTORE: 'postgres' }), /IPFS_BLOCKSTORE: postgres keeps blocks in the DATABASE_URL PostgreSQL; set DATABASE_URL/);
  assert.throws(() => loadConfig({ IPFS_BLOCKSTORE: 'postgres', DATABASE_URL: databaseUrl, IPFS_API_URL: 'http://127.0.0.1:5001' }), /IPFS_BLOCKSTORE: not used with IPFS_API_URL/);
  assert.throws(() => loadConfig({ IPFS_BLOCKSTORE: 'redis' }), /IPFS_BLOCKSTORE/);
});

test('CHAIN_ID_<NETWORK>: the chain id a network\'s endpoints must answer, its public chain\'s unless set; only beside its RPC URL', () => {
  assert.deepEqual(loadConfig({}).chainIds, { ethereum: 1, optimism: 10, bnb: 56, opbnb: 204 });
  assert.deepEqual(loadConfig({ RPC_URL_BNB: 'http://127.0.0.1:8545', CHAIN_ID_BNB: '97' }).chainIds, { ethereum: 1, optimism: 10, bnb: 97, opbnb: 204 });
  assert.throws(() => loadConfig({ CHAIN_ID_OPBNB: '5611' }), /CHAIN_ID_OPBNB: only with RPC_URL_OPBNB or RPC_URLS_OPBNB/);
  assert.throws(() => loadConfig({ RPC_URL_BNB: 'http://127.0.0.1:8545', CHAIN_ID_BNB: '0x61' }), /CHAIN_ID_BNB/);
});

test('EIP7702_<NETWORK>: on for every network unless set off, and nothing else', () => {
  assert.deepEqual(loadConfig({}).eip7702, { ethereum: true, optimism: true, bnb: true, opbnb: true });
  assert.deepEqual(loadConfig({ EIP7702_BNB: 'off' }).eip7702, { ethereum: true, optimism: true, bnb: false, opbnb: true });
  assert.throws(() => loadConfig({ EIP7702_OPBNB: 'false' }), /EIP7702_OPBNB/);
});

test('WS_URL_<NETWORK>: a ws(s):// URL for pushed heads, only beside its RPC URL', () => {
  assert.deepEqual(loadConfig({ RPC_URL_BNB: 'http://127.0.0.1:8545', WS_URL_BNB: 'ws://127.0.0.1:8545' }).wsUrls, { bnb: 'ws://127.0.0.1:8545' });
  assert.deepEqual(loadConfig({}).wsUrls, {});
  assert.throws(() => loadConfig({ WS_URL_OPBNB: 'wss://opbnb.example/KEY' }), /WS_URL_OPBNB: only with RPC_URL_OPBNB or RPC_URLS_OPBNB/);
  assert.throws(() => loadConfig({ RPC_URL_BNB: 'http://127.0.0.1:8545', WS_URL_BNB: 'http://127.0.0.1:8545' }), /WS_URL_BNB: a ws:\/\/ or wss:\/\/ URL/);
});

test('RPC_URLS_<NETWORK> lists a network\'s endpoints, the preferred first, each an http(s) URL once; not beside RPC_URL_<NETWORK>', () => {
  const config = loadConfig({ RPC_URLS_ETHEREUM: 'https://eth.example/v2/KEY, http://127.0.0.1:8545', RPC_URL_OPTIMISM: 'http://127.0.0.1:9545' });
  assert.deepEqual(config.rpcUrls, { ethereum: ['https://eth.example/v2/KEY', 'http://127.0.0.1:8545'], optimism: ['http://127.0.0.1:9545'] });
  assert.deepEqual(loadConfig({ RPC_URLS_BNB: '' }).rpcUrls, {});
  for (const [env, problem] of [
    [{ RPC_URLS_ETHEREUM: 'https://eth.example/v2/KEY,not a url' }, /^RPC_URLS_ETHEREUM: entry 2 is not a URL$/],
    [{ RPC_URLS_ETHEREUM: 'ftp://eth.example/KEY' }, /^RPC_URLS_ETHEREUM: entry 1 \(eth\.example\) is not http/],
    [{ RPC_URLS_ETHEREUM: 'https://eth.example/v2/KEY,https://eth.example/v2/KEY' }, /^RPC_URLS_ETHEREUM: entry 2 \(eth\.example\) is listed twice$/],
    [{ RPC_URLS_BNB: 'https://bsc.example', RPC_URL_BNB: 'https://bsc.example' }, /^RPC_URLS_BNB: not with RPC_URL_BNB/],
  ] as const) {
    assert.throws(() => loadConfig(env), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 1);
      assert.match(error.problems[0]!, problem);
      assert.doesNotMatch(error.problems[0]!, /KEY/, 'a URL\'s path (a provider key) is never echoed');
      return true;
    });
  }
});
