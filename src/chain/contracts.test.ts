import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEventLogs, parseUnits } from 'viem';
import { foundry } from 'viem/chains';
import { Resolver } from 'did-resolver';
import { getResolver } from 'ethr-did-resolver';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { ethrDidRegistryAbi } from '../gen/contracts/ethr-did-registry.ts';
import {
  assertReverts, deployContracts, holder, holderFunds, initialSupply, owner, payee, relayer, splitSignature, stranger, tokenDomain, tokenName,
  type ContractsChain,
} from '../../test/support/token-contracts.ts';

// VixpToken (ERC-20, ownership, EIP-2612) and the ERC-1056 DID registry on a real anvil; EIP-3009
// in eip3009-contract.test.ts.
let anvil: AnvilProcess | undefined;
let chain: ContractsChain;

before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0 });
  chain = await deployContracts(anvil.url);
});

after(async () => {
  await anvil?.stop();
});

// ---------------------------------------------------------------------------------------------------
// ERC-20 basics and ownership

test('VixpToken: metadata, initial supply to the owner, EIP-712 domain', async () => {
  const { token, tokenAddress } = chain;
  assert.equal(await token.read.name(), tokenName);
  assert.equal(await token.read.symbol(), 'VIXP');
  assert.equal(await token.read.decimals(), 18);
  assert.equal(await token.read.totalSupply(), initialSupply);
  assert.equal(await token.read.owner(), owner.address);
  assert.equal(await token.read.balanceOf([owner.address]), initialSupply - holderFunds);

  const [, name, version, chainId, verifyingContract] = await token.read.eip712Domain();
  assert.deepEqual({ name, version, chainId, verifyingContract }, { name: tokenName, version: '1', chainId: 31337n, verifyingContract: tokenAddress });
});

test('VixpToken: the owner mints, anyone else is refused', async () => {
  const { token, tokenAs, mined } = chain;
  const before = await token.read.balanceOf([payee.address]);
  await mined(tokenAs(owner).write.mint([payee.address, 5n]));
  assert.equal(await token.read.balanceOf([payee.address]), before + 5n);

  await assertReverts(tokenAs(stranger).simulate.mint([stranger.address, 5n]), 'OwnableUnauthorizedAccount');
});

// ---------------------------------------------------------------------------------------------------
// EIP-2612

test('EIP-2612: permit signed by the holder, submitted by the relayer, lets the spender transferFrom', async () => {
  const { token, tokenAs, mined, publicClient } = chain;
  const value = parseUnits('2', 18);
  const nonce = await token.read.nonces([holder.address]);
  const deadline = (await publicClient.getBlock()).timestamp + 3600n;
  const signature = await holder.signTypedData({
    domain: tokenDomain(chain.tokenAddress),
    types: {
      Permit: [
        { name: 'owner', type: 'address' },
        { name: 'spender', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'nonce', type: 'uint256' },
        { name: 'deadline', type: 'uint256' },
      ],
    },
    primaryType: 'Permit',
    message: { owner: holder.address, spender: payee.address, value, nonce, deadline },
  });
  const { v, r, s } = splitSignature(signature);

  await mined(tokenAs(relayer).write.permit([holder.address, payee.address, value, deadline, v, r, s]));
  assert.equal(await token.read.allowance([holder.address, payee.address]), value);
  assert.equal(await token.read.nonces([holder.address]), nonce + 1n);

  const payeeBefore = await token.read.balanceOf([payee.address]);
  await mined(tokenAs(payee).write.transferFrom([holder.address, payee.address, value]));
  assert.equal(await token.read.balanceOf([payee.address]), payeeBefore + value);
  assert.equal(await token.read.allowance([holder.address, payee.address]), 0n);
});

// ---------------------------------------------------------------------------------------------------
// ERC-1056 DID registry

test('EthereumDIDRegistry: an identity owns itself until changeOwner, which emits DIDOwnerChanged', async () => {
  const { registryAs, mined } = chain;
  const identity = stranger.address;
  const registry = registryAs(stranger);
  assert.equal(await registry.read.identityOwner([identity]), identity);

  const receipt = await mined(registry.write.changeOwner([identity, payee.address]));
  const [changed] = parseEventLogs({ abi: ethrDidRegistryAbi, logs: receipt.logs, eventName: 'DIDOwnerChanged' });
  assert.deepEqual(changed?.args, { identity, owner: payee.address, previousChange: 0n });
  assert.equal(await registry.read.identityOwner([identity]), payee.address);
  assert.equal(await registry.read.changed([identity]), receipt.blockNumber);

  // The former owner has lost control.
  await assertReverts(registry.simulate.changeOwner([identity, stranger.address]), undefined, 'bad_actor');
});

test('EthereumDIDRegistry: ethr-did-resolver resolves did:ethr against it', async () => {
  // Runs after the changeOwner above: the resolver must follow the DIDOwnerChanged event.
  const { url, registryAddress } = chain;
  const resolver = new Resolver(getResolver({ networks: [{ name: 'dev', chainId: foundry.id, rpcUrl: url, registry: registryAddress }] }));
  const { didDocument, didResolutionMetadata } = await resolver.resolve(`did:ethr:dev:${stranger.address}`);
  assert.equal(didResolutionMetadata.error, undefined);
  const controller = didDocument?.verificationMethod?.find((method) => method.id.endsWith('#controller'));
  assert.equal(controller?.blockchainAccountId, `eip155:${foundry.id}:${payee.address}`);
});
