import { test } from 'node:test';
import { call } from '../support/platform.ts';
import { prepareTransfer } from '../support/transfer-scheme.ts';
import { assertEachSettledOnce, fundedSenders, useTwoEndpoints } from '../support/two-endpoints.ts';

// The operator's check of issue 39, as worded (test/node-providers.test.ts is its short form): the
// payment network on the operator's node through two endpoints (RPC_URLS_ETHEREUM), the first a
// provider answering 429 to every third request and failing for 20 s in the middle of a 60 s burst of
// transfers (2 a second): every transfer answered settled, each on chain once, none 500.
const rig = useTwoEndpoints();

test('two endpoints, the first throttling every third request and down 20 s in the middle of a 60 s burst: 120 transfers each answered settled, once, never 500', async () => {
  const { t, first } = rig;
  const count = 120;
  const perSender = 2;
  const { senders, receiver } = await fundedSenders(rig, count / perSender);
  const prepared = [];
  for (let round = 0; round < perSender; round++) {
    for (const sender of senders) {
      const { data: _data, ...params } = await prepareTransfer(t.app, sender, receiver.address, '1');
      prepared.push(params);
    }
  }

  first.throttle = { every: 3, retryAfterSeconds: 1, as: 'http' };
  const started = Date.now();
  const answers = await Promise.all(prepared.map(async (params, i) => {
    // 2 a second, whatever the answers' pace.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + i * 500 - Date.now())));
    // From 20 s to 40 s in, the first endpoint fails every request.
    if (i === 40) {
      first.down = true;
      setTimeout(() => { first.down = false; }, 20_000);
    }
    return call(t.app, '/token', 'transfer', params);
  }));
  first.throttle = undefined;

  // Every transfer settled, none 500, each on chain once: the receiver holds exactly one per transfer answered.
  await assertEachSettledOnce(rig, answers, receiver, count);
});
