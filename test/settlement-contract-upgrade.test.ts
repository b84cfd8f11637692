import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { isAddressEqual, toFunctionSelector, type Hex } from 'viem';
import { settlementDeploymentName } from '../src/chain/platform-contracts.ts';
import { vixpSettlementAbi } from '../src/gen/contracts/vixp-settlement.ts';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import { newUser } from './support/payment-calls.ts';
import { releaseDataDirSchema } from './support/stores.ts';

// The settlement contract's calldata layout changed (contracts/VixpSettlement.sol): a platform started
// on the data directory of an earlier release, whose deployments table names the earlier contract
// `VixpSettlement`, must not call that one with the new layout (every batch would revert), nor be
// given it by CONTRACTS_<NETWORK>.

const settleSelector = toFunctionSelector(vixpSettlementAbi.find((entry) => entry.type === 'function' && entry.name === 'settle')!);

test('a platform started on an earlier release\'s state deploys the new settlement contract and settles through it; a configured earlier one stops the start', async () => {
  const first = await startTestPlatform();
  const { dataDir } = first;
  let second: TestPlatform | undefined;
  try {
    const earlier = first.platform.contracts.ethereum.settlement;
    // What an earlier release left: its settlement contract recorded (and journaled) as `VixpSettlement`.
    const { db } = first.platform.store;
    await db.updateTable('deployments').set({ name: 'VixpSettlement' }).where('name', '=', settlementDeploymentName).execute();
    await db.updateTable('chain_txs').set({ reference: 'VixpSettlement' }).where('kind', '=', 'deploy').where('reference', '=', settlementDeploymentName).execute();
    await first.stop({ keepData: true });

    // VixpSettlement carries custodial transfers on a network without EIP-7702 (and x402's everywhere).
    second = await startTestPlatform({ dataDir, env: { SETTLEMENT_BATCH_WINDOW_MS: '400', EIP7702_ETHEREUM: 'off' } });
    const settlement = second.platform.contracts.ethereum.settlement;
    assert.ok(!isAddressEqual(settlement, earlier), 'a new settlement contract was deployed, not the recorded earlier one reused');
    const chain = second.platform.chains.ethereum;
    assert.ok(((await chain.client.getCode({ address: settlement })) ?? '').includes(settleSelector.slice(2)), 'it has the new settle');
    const rows = await second.platform.store.db.selectFrom('deployments').select(['name', 'address']).where('network', '=', 'ethereum')
      .where('name', 'in', ['VixpSettlement', settlementDeploymentName]).orderBy('name').execute();
    assert.deepEqual(rows.map((r) => r.name), ['VixpSettlement', settlementDeploymentName]);

    // Two transfers in one batch go through the new contract.
    const t = second;
    const [a, b] = await Promise.all([newUser({ t }, '10'), newUser({ t }, '10')]);
    const receiver = await newUser({ t });
    const prepared = await Promise.all([prepareTransfer(t.app, a, receiver.address, '3'), prepareTransfer(t.app, b, receiver.address, '4')]);
    const answers = await Promise.all(prepared.map(({ data: _data, ...params }) => call(t.app, '/token', 'transfer', params)));
    for (const answer of answers) assert.equal(answer.resultCode, '200', JSON.stringify(answer));
    assert.equal(answers[0].TransactionID, answers[1].TransactionID, 'one settlement batch carried both');
    const receipt = await chain.client.getTransactionReceipt({ hash: answers[0].TransactionID as Hex });
    assert.ok(receipt.to && isAddressEqual(receipt.to, settlement), 'sent to the new settlement contract');
    assert.equal((await t.platform.wallet.getBalance('ethereum', { address: receiver.address })).balance, '7');

    // An operator who names a settlement contract without the new settle (here: the VIXP token) is stopped.
    const token = second.platform.contracts.ethereum.vixpToken;
    await second.stop({ keepData: true });
    second = undefined;
    await assert.rejects(
      startTestPlatform({ dataDir, env: { CONTRACTS_ETHEREUM: `settlement=${token}` } }),
      new RegExp(`CONTRACTS_ETHEREUM: settlement=${token} is not the settlement contract of this release`),
    );
  } finally {
    await second?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await releaseDataDirSchema(dataDir);
  }
});
