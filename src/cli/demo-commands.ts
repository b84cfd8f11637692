import { randomUUID } from 'node:crypto';
import { addUser } from '../identity/add-user.ts';
import { addStore } from '../payments/add-store.ts';
import { publishRateNotice } from '../commerce/rate-notice.ts';
import type { CliCommand, CliContext } from './command.ts';
import { withPlatform } from './command.ts';
import { describeMessage, login, paymentsClient, qrCode, runStream, tokenApi, unaryCall } from './payments-client.ts';
import { appPayment, endpointOptions, endpointsOf } from './simulator-commands.ts';

/**
 * What an operator would do first (register a store, a user with tokens, a rate notice), done on
 * the platform core beside the running server; everything after it goes over the public interfaces.
 */
async function setUp(context: CliContext, options: { userTokens: string; storeTokens: string }) {
  const suffix = randomUUID().slice(0, 6);
  return withPlatform(context, async (platform) => {
    const stores = platform.admin.stores;
    const network = platform.config.paymentNetwork;
    const store = await addStore(stores, { tid: `DEMO-${suffix}`, name: `Demo Store ${suffix}` });
    const password = `demo-${randomUUID()}`;
    const user = await addUser({ users: platform.identity.users, createWalletAccount: () => platform.wallet.createAddress() }, { id: `demo-${suffix}`, password, name: 'Demo User' });
    if (options.userTokens !== '0') await platform.wallet.mint(network, { to: user.address, amount: options.userTokens });
    if (options.storeTokens !== '0') await platform.wallet.mint(network, { to: store.settlementAddress, amount: options.storeTokens });
    const currency = platform.config.defaultCurrency;
    const rate = (await stores.merchants.latestRateNotice(currency)) ?? await publishRateNotice(stores, { currency, rate: '1000' });
    console.log(`setup: store ${store.tid} (${store.settlementAddress}), user ${user.userId} (${user.address}), rate ${rate.rate} ${currency}`);
    // approval_date, reward_date and the like are wall-clock times of the platform's zone, not this machine's.
    console.log(`dates below (yyyyMMddHHmmss) are in the platform's TIME_ZONE, ${platform.config.timeZone}`);
    return { store, user: { ...user, password } };
  });
}

export const demoPayCommand: CliCommand = {
  summary: '[--amount 15000]  a whole payment between a POS and an app stream, printing each state',
  options: { amount: { type: 'string' }, ...endpointOptions },
  run: async (context) => {
    const amount = typeof context.values.amount === 'string' ? context.values.amount : '15000';
    const { store, user } = await setUp(context, { userTokens: '100', storeTokens: '0' });
    const endpoints = endpointsOf(context);
    const client = paymentsClient(endpoints);
    const token = await login(endpoints, user.userId, user.password);
    const qr = await qrCode(endpoints, user.userId, user.address);
    const app = appPayment(endpoints, client, token, user, 'app');
    await new Promise((resolve) => setTimeout(resolve, 200)); // the app shows its QR code before the POS scans it
    const first = { state: 'START_PAY', tid: store.tid, tran_no: `DEMO${Date.now()}`, exchange_amount: amount, ...qr };
    console.log(describeMessage('pos', '->', { content: first }));
    const pos = runStream(client, 'StartPayment', store.apiKey, first, (message) => console.log(describeMessage('pos', '<-', message)));
    const [posMessages] = await Promise.all([pos, app]);
    const balances = {
      user: (await tokenApi(endpoints, 'getBalance', { address: user.address })).balance,
      store: (await tokenApi(endpoints, 'getBalance', { address: store.settlementAddress })).balance,
    };
    client.close();
    const end = posMessages.at(-1);
    return { resCode: end?.common?.res_code, approvalNo: end?.content?.approval_no, tokenAmount: end?.content?.token_amount, balances };
  },
};

export const demoRewardCommand: CliCommand = {
  summary: '[--amount 5000]  a reward\'s whole life: issue, claim (00), claim again (05), cancel (00), cancel again (03); each step says what it shows',
  options: { amount: { type: 'string' }, ...endpointOptions },
  run: async (context) => {
    const amount = typeof context.values.amount === 'string' ? context.values.amount : '5000';
    const { store, user } = await setUp(context, { userTokens: '0', storeTokens: '1000' });
    const endpoints = endpointsOf(context);
    const client = paymentsClient(endpoints);
    const token = await login(endpoints, user.userId, user.password);
    const print = (side: string, message: any, label?: string) => { console.log(describeMessage(side, '<-', message, label)); return message; };
    const step = (n: number, what: string) => console.log(`\nstep ${n}/5: ${what}`);
    const balance = async (address: string) => (await tokenApi(endpoints, 'getBalance', { address })).balance as string;

    step(1, 'the POS issues a reward for the user (IssueReward): the store will pay it out of its account');
    const issueRequest = { tid: store.tid, reward_reason: `demo-${Date.now()}`, exchange_amount: amount };
    console.log(describeMessage('pos', '->', { content: issueRequest }, 'IssueReward'));
    const issuedMessage = print('pos', await unaryCall(client, 'IssueReward', store.apiKey, issueRequest), 'IssueReward');
    const issued = issuedMessage.content;
    const claim = async () => {
      const first = { state: 'START_REWARD', reward_id: issued.reward_id, token_amount: issued.token_amount, token_symbol: issued.token_symbol, user_address: user.address };
      console.log(describeMessage('app', '->', { content: first }));
      const messages = await runStream(client, 'DoPayment', token, first, (message) => { print('app', message); });
      return messages.at(-1)?.common?.res_code as string | undefined;
    };
    step(2, 'the app claims it from the receipt (DoPayment START_REWARD): 00, the tokens move to the user');
    const claimed = await claim();
    const balanceAfterClaim = await balance(user.address);
    console.log(`  user balance now ${balanceAfterClaim}`);
    step(3, 'the app claims it again, on purpose: 05 Already rewarded, nothing moves (a reward pays once)');
    const claimedAgain = await claim();
    step(4, 'the POS cancels the reward (CancelReward): 00, the claimed tokens move back to the store');
    const cancel = { reward_id: issued.reward_id, token_amount: issued.token_amount };
    console.log(describeMessage('pos', '->', { content: cancel }, 'CancelReward'));
    const canceled = print('pos', await unaryCall(client, 'CancelReward', store.apiKey, cancel), 'CancelReward').common.res_code as string;
    step(5, 'the POS cancels it again, on purpose: 03 Reward already canceled, nothing moves (a cancellation happens once)');
    const canceledAgain = print('pos', await unaryCall(client, 'CancelReward', store.apiKey, cancel), 'CancelReward').common.res_code as string;
    const userBalance = await balance(user.address);
    client.close();
    const expected = issuedMessage.common?.res_code === '00' && claimed === '00' && claimedAgain === '05' && canceled === '00' && canceledAgain === '03';
    console.log(`\n${expected
      ? `as expected: claimed once (00), the repeated claim refused (05), cancelled once (00), the repeated cancellation refused (03); the user's ${balanceAfterClaim} went back to the store, so the user ends with ${userBalance}`
      : 'NOT as expected: see the codes above'}\n`);
    return {
      rewardId: issued.reward_id, tokenAmount: issued.token_amount,
      resCodes: { issue: issuedMessage.common?.res_code as string, claim: claimed, claimAgain: claimedAgain, cancel: canceled, cancelAgain: canceledAgain },
      asExpected: expected, userBalanceAfterClaim: balanceAfterClaim, userBalance,
    };
  },
};
