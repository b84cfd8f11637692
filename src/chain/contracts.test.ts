import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  getAddress,
  getContract,
  isAddressEqual,
  http,
  keccak256,
  parseEventLogs,
  parseSignature,
  parseUnits,
  toHex,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { Resolver } from 'did-resolver';
import { getResolver } from 'ethr-did-resolver';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../gen/contracts/vixp-token.ts';
import { ethrDidRegistryAbi, ethrDidRegistryBytecode } from '../gen/contracts/ethr-did-registry.ts';

// anvil's funded dev accounts; `relayer` submits what `holder` signs.
const devMnemonic = 'test test test test test test test test test test test junk';
const [owner, holder, relayer, payee, stranger] = [0, 1, 2, 3, 4].map((addressIndex) =>
  mnemonicToAccount(devMnemonic, { addressIndex }),
) as [HDAccount, HDAccount, HDAccount, HDAccount, HDAccount];

const tokenName = 'VIXP Token';
const initialSupply = parseUnits('1000000', 18);
const holderFunds = parseUnits('1000', 18);

let anvil: AnvilProcess | undefined;
let chain: Awaited<ReturnType<typeof deployContracts>>;

before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0 });
  chain = await deployContracts(anvil.url);
});

after(async () => {
  await anvil?.stop();
});

/** Clients on the anvil at `url`, with VixpToken and EthereumDIDRegistry deployed by `owner`. */
async function deployContracts(url: string) {
  const publicClient = createPublicClient({ chain: foundry, transport: http(url) });
  const walletOf = (account: HDAccount) => createWalletClient({ account, chain: foundry, transport: http(url) });

  const mined = async (hash: Promise<Hex>) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash });
    assert.equal(receipt.status, 'success');
    return receipt;
  };
  const deploy = async (abi: Abi, bytecode: Hex, args: readonly unknown[]) => {
    const { contractAddress } = await mined(walletOf(owner).deployContract({ abi, bytecode, args }));
    assert.ok(contractAddress);
    return getAddress(contractAddress);
  };

  const tokenAddress = await deploy(vixpTokenAbi, vixpTokenBytecode, [tokenName, 'VIXP', owner.address, initialSupply]);
  const registryAddress = await deploy(ethrDidRegistryAbi, ethrDidRegistryBytecode, []);
  /** The token as seen by `account` (reads, simulations and writes from that account). */
  const tokenAs = (account: HDAccount) =>
    getContract({ address: tokenAddress, abi: vixpTokenAbi, client: { public: publicClient, wallet: walletOf(account) } });
  const registryAs = (account: HDAccount) =>
    getContract({ address: registryAddress, abi: ethrDidRegistryAbi, client: { public: publicClient, wallet: walletOf(account) } });

  await mined(tokenAs(owner).write.transfer([holder.address, holderFunds]));
  return { url, publicClient, mined, tokenAs, registryAs, token: tokenAs(stranger), tokenAddress, registryAddress };
}

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
// EIP-3009

test('EIP-3009: type hashes are the standard (USDC) ones', async () => {
  const { token } = chain;
  assert.equal(await token.read.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(), '0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267');
  assert.equal(await token.read.RECEIVE_WITH_AUTHORIZATION_TYPEHASH(), '0xd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de8');
  assert.equal(await token.read.CANCEL_AUTHORIZATION_TYPEHASH(), '0x158b0a9edf7a828aad02f63cd515c68ef2f50ba807396f6d12842833a1597429');
  assert.equal(
    await token.read.TRANSFER_WITH_AUTHORIZATION_TYPEHASH(),
    keccak256(toHex('TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)')),
  );
});

test('EIP-3009: a relayer submits the holder-signed transfer, which moves exactly the amount, once', async () => {
  const { token, tokenAs, mined, publicClient } = chain;
  const value = parseUnits('12.5', 18);
  const auth = await signAuthorization(holder, { to: payee.address, value });
  const args = [holder.address, payee.address, value, auth.validAfter, auth.validBefore, auth.nonce, auth.v, auth.r, auth.s] as const;
  const balances = () => Promise.all([holder, payee, relayer].map((a) => token.read.balanceOf([a.address])));
  const [holderBefore, payeeBefore, relayerBefore] = await balances();
  const holderEthBefore = await publicClient.getBalance({ address: holder.address });

  const receipt = await mined(tokenAs(relayer).write.transferWithAuthorization(args));

  assert.ok(isAddressEqual(receipt.from, relayer.address), 'submitted by the relayer');
  assert.deepEqual(await balances(), [holderBefore! - value, payeeBefore! + value, relayerBefore]);
  assert.equal(await publicClient.getBalance({ address: holder.address }), holderEthBefore, 'the holder paid no gas');
  assert.equal(await token.read.authorizationState([holder.address, auth.nonce]), true);
  const [used] = parseEventLogs({ abi: vixpTokenAbi, logs: receipt.logs, eventName: 'AuthorizationUsed' });
  assert.deepEqual(used?.args, { authorizer: holder.address, nonce: auth.nonce });

  // The very same authorization again.
  await assertReverts(tokenAs(relayer).simulate.transferWithAuthorization(args), 'AuthorizationAlreadyUsed');
});

test('EIP-3009: the bytes-signature overload takes the same authorization', async () => {
  const { token, tokenAs, mined } = chain;
  const auth = await signAuthorization(holder, { to: payee.address, value: 7n });
  const payeeBefore = await token.read.balanceOf([payee.address]);
  await mined(
    tokenAs(relayer).write.transferWithAuthorization([
      holder.address, payee.address, 7n, auth.validAfter, auth.validBefore, auth.nonce, auth.signature,
    ]),
  );
  assert.equal(await token.read.balanceOf([payee.address]), payeeBefore + 7n);
});

test('EIP-3009: expired and not-yet-valid authorizations revert', async () => {
  const now = (await chain.publicClient.getBlock()).timestamp;
  const expired = await signAuthorization(holder, { to: payee.address, value: 1n, validBefore: now - 1n });
  await assertReverts(relayTransfer(payee.address, 1n, expired), 'AuthorizationExpired');

  const early = await signAuthorization(holder, { to: payee.address, value: 1n, validAfter: now + 3600n, validBefore: now + 7200n });
  await assertReverts(relayTransfer(payee.address, 1n, early), 'AuthorizationNotYetValid');
});

test('EIP-3009: a signature by the wrong key, or for other terms, reverts', async () => {
  const byStranger = await signAuthorization(stranger, { from: holder.address, to: payee.address, value: 1n });
  await assertReverts(relayTransfer(payee.address, 1n, byStranger), 'InvalidAuthorizationSignature');

  const signedForOne = await signAuthorization(holder, { to: payee.address, value: 1n });
  await assertReverts(relayTransfer(payee.address, 2n, signedForOne), 'InvalidAuthorizationSignature');
  await assertReverts(relayTransfer(stranger.address, 1n, signedForOne), 'InvalidAuthorizationSignature');
});

test('EIP-3009: receiveWithAuthorization only from the payee', async () => {
  const { token, tokenAs, mined } = chain;
  const auth = await signAuthorization(holder, { to: payee.address, value: 3n, primaryType: 'ReceiveWithAuthorization' });
  const args = [holder.address, payee.address, 3n, auth.validAfter, auth.validBefore, auth.nonce, auth.v, auth.r, auth.s] as const;
  await assertReverts(tokenAs(relayer).simulate.receiveWithAuthorization(args), 'CallerIsNotPayee');

  const payeeBefore = await token.read.balanceOf([payee.address]);
  await mined(tokenAs(payee).write.receiveWithAuthorization(args));
  assert.equal(await token.read.balanceOf([payee.address]), payeeBefore + 3n);
});

test('EIP-3009: a canceled authorization can no longer be used', async () => {
  const { token, tokenAs, mined } = chain;
  const auth = await signAuthorization(holder, { to: payee.address, value: 1n });
  const cancelSignature = await holder.signTypedData({
    domain: tokenDomain(),
    types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
    primaryType: 'CancelAuthorization',
    message: { authorizer: holder.address, nonce: auth.nonce },
  });
  const { v, r, s } = splitSignature(cancelSignature);

  const receipt = await mined(tokenAs(relayer).write.cancelAuthorization([holder.address, auth.nonce, v, r, s]));
  const [canceled] = parseEventLogs({ abi: vixpTokenAbi, logs: receipt.logs, eventName: 'AuthorizationCanceled' });
  assert.deepEqual(canceled?.args, { authorizer: holder.address, nonce: auth.nonce });
  assert.equal(await token.read.authorizationState([holder.address, auth.nonce]), true);

  await assertReverts(relayTransfer(payee.address, 1n, auth), 'AuthorizationAlreadyUsed');
  await assertReverts(
    tokenAs(relayer).simulate.cancelAuthorization([holder.address, auth.nonce, cancelSignature]),
    'AuthorizationAlreadyUsed',
  );
});

// ---------------------------------------------------------------------------------------------------
// EIP-2612

test('EIP-2612: permit signed by the holder, submitted by the relayer, lets the spender transferFrom', async () => {
  const { token, tokenAs, mined, publicClient } = chain;
  const value = parseUnits('2', 18);
  const nonce = await token.read.nonces([holder.address]);
  const deadline = (await publicClient.getBlock()).timestamp + 3600n;
  const signature = await holder.signTypedData({
    domain: tokenDomain(),
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

// ---------------------------------------------------------------------------------------------------
// helpers

function tokenDomain() {
  return { name: tokenName, version: '1', chainId: foundry.id, verifyingContract: chain.tokenAddress } as const;
}

interface Authorization {
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  /** 65 bytes r || s || v, for the `bytes signature` overloads */
  signature: Hex;
  v: number;
  r: Hex;
  s: Hex;
}

/** Signs an EIP-3009 authorization with `signer`'s key: by default a transfer from the signer, valid for an hour. */
async function signAuthorization(
  signer: HDAccount,
  terms: {
    from?: Address;
    to: Address;
    value: bigint;
    validAfter?: bigint;
    validBefore?: bigint;
    primaryType?: 'TransferWithAuthorization' | 'ReceiveWithAuthorization';
  },
): Promise<Authorization> {
  const fields = [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ] as const;
  const primaryType = terms.primaryType ?? 'TransferWithAuthorization';
  const validAfter = terms.validAfter ?? 0n;
  const validBefore = terms.validBefore ?? (await chain.publicClient.getBlock()).timestamp + 3600n;
  const nonce = toHex(randomBytes(32));
  const signature = await signer.signTypedData({
    domain: tokenDomain(),
    types: { [primaryType]: fields },
    primaryType,
    message: { from: terms.from ?? signer.address, to: terms.to, value: terms.value, validAfter, validBefore, nonce },
  });
  return { validAfter, validBefore, nonce, signature, ...splitSignature(signature) };
}

function splitSignature(signature: Hex): { v: number; r: Hex; s: Hex } {
  const { r, s, yParity } = parseSignature(signature);
  return { v: yParity + 27, r, s };
}

/** Simulates the relayer submitting `auth` as a transfer of `value` from the holder to `to`. */
function relayTransfer(to: Address, value: bigint, auth: Authorization) {
  return chain.tokenAs(relayer).simulate.transferWithAuthorization([
    holder.address, to, value, auth.validAfter, auth.validBefore, auth.nonce, auth.v, auth.r, auth.s,
  ]);
}

/** Asserts that `call` reverts with the custom error `errorName`, or with the require message `reason`. */
async function assertReverts(call: Promise<unknown>, errorName: string | undefined, reason?: string): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof BaseError, String(error));
    const revert = error.walk((e) => e instanceof ContractFunctionRevertedError);
    assert.ok(revert instanceof ContractFunctionRevertedError, `not a revert: ${error.shortMessage}`);
    if (errorName) assert.equal(revert.data?.errorName, errorName);
    if (reason) assert.equal(revert.reason, reason);
    return true;
  });
}
