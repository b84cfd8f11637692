import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EthereumDIDRegistry } from 'ethr-did-resolver';
import { compileContracts, renderArtifactModules, renderTestArtifacts, solcSettings as scriptSettings } from '../scripts/compile-contracts.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../src/gen/contracts/vixp-token.ts';
import { ethrDidRegistryAbi, ethrDidRegistryBytecode } from '../src/gen/contracts/ethr-did-registry.ts';
import { solcSettings, solcVersion } from '../src/gen/contracts/compiler.ts';

// One compilation (about 3 s) shared by every check below.
const fresh = compileContracts();

test('committed artifacts equal a fresh compilation of contracts/ (run npm run contracts:compile)', () => {
  assert.deepEqual(vixpTokenAbi, fresh.contracts.VixpToken.abi);
  assert.equal(vixpTokenBytecode, fresh.contracts.VixpToken.bytecode);
  assert.deepEqual(ethrDidRegistryAbi, fresh.contracts.EthereumDIDRegistry.abi);
  assert.equal(ethrDidRegistryBytecode, fresh.contracts.EthereumDIDRegistry.bytecode);
});

test('artifact files are byte-for-byte what the script renders (nobody edited them)', () => {
  for (const [name, text] of renderArtifactModules(fresh)) {
    assert.equal(readFileSync(new URL(`../src/gen/contracts/${name}`, import.meta.url), 'utf8'), text, name);
  }
  assert.equal(readFileSync(new URL('./support/gen/test-tokens.ts', import.meta.url), 'utf8'), renderTestArtifacts(fresh), 'test-tokens.ts');
});

test('compiler.ts records the compiler and settings actually used', () => {
  assert.equal(solcVersion, fresh.solcVersion);
  assert.match(solcVersion, /^0\.8\.30\+/);
  assert.deepEqual(solcSettings, scriptSettings);
  assert.deepEqual(fresh.warnings, []);
});

test('the DID registry ABI is the one ethr-did-resolver talks to', () => {
  const canonical = (abi: readonly unknown[]) => abi.map((entry) => JSON.stringify(entry)).sort();
  assert.deepEqual(canonical(ethrDidRegistryAbi), canonical(EthereumDIDRegistry.abi));
});
