import { randomUUID } from 'node:crypto';
import { addUser } from '../identity/add-user.ts';
import { addStore } from '../payments/add-store.ts';
import { publishRateNotice } from '../commerce/rate-notice.ts';
import type { CliCommand, CliContext } from './commands.ts';
import { withPlatform } from './cli-deps.ts';
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
  summary: '[--amount 5000]  IssueReward, claim it from the receipt, claim again (05), cancel it, cancel again (03)',
  options: { amount: { type: 'string' }, ...endpointOptions },
  run: async (context) => {
    const amount = typeof context.values.amount === 'string' ? context.values.amount : '5000';
    const { store, user } = await setUp(context, { userTokens: '0', storeTokens: '1000' });
    const endpoints = endpointsOf(context);
    const client = paymentsClient(endpoints);
    const token = await login(endpoints, user.userId, user.password);
    const print = (side: string, message: any, label?: string) => { console.log(describeMessage(side, '<-', message, label)); return message; };

    const issueRequest = { tid: store.tid, reward_reason: `demo-${Date.now()}`, exchange_amount: amount };
    console.log(describeMessage('pos', '->', { content: issueRequest }, 'IssueReward'));
    const issued = print('pos', await unaryCall(client, 'IssueReward', store.apiKey, issueRequest), 'IssueReward').content;
    const claim = () => {
      const first = { state: 'START_REWARD', reward_id: issued.reward_id, token_amount: issued.token_amount, token_symbol: issued.token_symbol, user_address: user.address };
      console.log(describeMessage('app', '->', { content: first }));
      return runStream(client, 'DoPayment', token, first, (message) => { print('app', message); });
    };
    await claim();
    await claim();
    const cancel = { reward_id: issued.reward_id, token_amount: issued.token_amount };
    console.log(describeMessage('pos', '->', { content: cancel }, 'CancelReward'));
    print('pos', await unaryCall(client, 'CancelReward', store.apiKey, cancel), 'CancelReward');
    const again = print('pos', await unaryCall(client, 'CancelReward', store.apiKey, cancel), 'CancelReward');
    client.close();
    return { rewardId: issued.reward_id, lastResCode: again.common.res_code, userBalance: (await tokenApi(endpoints, 'getBalance', { address: user.address })).balance };
  },
};
