import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress } from 'viem';
import { nextApprovalNumber } from './approval-number.ts';
import { exchangeDateIndexOf, publishRateNotice } from './rate-notice.ts';
import type { RateNoticeToken } from '../store/merchant-repository.ts';
import { resolveSettlementToken, type SettlementTokenDeps } from './settlement-token.ts';
import { quoteTokens } from './token-quote.ts';
import { normalizeDecimal, tokenUnitsFor } from './exchange.ts';

// The commerce parts between a POS's request and the money moved, on in-memory deps: which token
// settles, how many of its units a currency amount is, the notice dates and approval numbers.
const vixp = { contractAddress: getAddress('0x00000000000000000000000000000000000000c1'), tokenSymbol: 'VIXP', decimals: 18 };
const usdx = { contractAddress: getAddress('0x00000000000000000000000000000000000000c2'), tokenSymbol: 'USDX', decimals: 6 };
const userMade = { contractAddress: getAddress('0x00000000000000000000000000000000000000c3'), tokenSymbol: 'USDX', decimals: 18 };
const tokens = [vixp, usdx, userMade];

/** The allow-list's record of a token. */
const listed = (t?: typeof usdx & { transferPath?: 'eip3009' | 'account' }) => t && ({
  network: 'ethereum', contractAddress: t.contractAddress, symbol: t.tokenSymbol, decimals: t.decimals, name: t.tokenSymbol, allowedAt: 1,
  eip712Version: t.transferPath === 'account' ? null : '1', transferPath: t.transferPath ?? 'eip3009' as const,
});

/** A notice's token as a key of the test's map: "VIXP" for the platform token, else network:contract. */
const keyOf = (token?: RateNoticeToken) => (!token || 'platformToken' in token ? 'VIXP' : `${token.network}:${token.contractAddress}`);

function tokenDeps(allowed: Array<typeof usdx & { transferPath?: 'eip3009' | 'account' }> = [usdx]): SettlementTokenDeps & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    wallet: {
      getTokenInfo: async (_network, params: { contractAddress?: string }) => {
        asked.push(params.contractAddress ?? 'platform');
        const token = params.contractAddress ? tokens.find((t) => t.contractAddress === params.contractAddress) : vixp;
        if (!token) throw new Error(`no token ${params.contractAddress}`);
        return { ...token, name: token.tokenSymbol, totalSupply: '0' } as never;
      },
    },
    settlementTokens: {
      find: async (_network, address) => listed(allowed.find((t) => t.contractAddress === address)),
      findBySymbol: async (_network, symbol) => allowed.filter((t) => t.tokenSymbol === symbol).map((t) => listed(t)!),
    },
  };
}

test('the settlement token: VIXP by default, by its contract or symbol, an allowed token by contract or by its listed symbol; nothing else', async () => {
  const deps = tokenDeps();
  assert.deepEqual(await resolveSettlementToken(deps, 'ethereum', {}), vixp);
  assert.deepEqual(await resolveSettlementToken(deps, 'ethereum', { tokenSymbol: 'VIXP' }), vixp);
  assert.deepEqual(await resolveSettlementToken(deps, 'ethereum', { contractAddress: vixp.contractAddress.toLowerCase() }), vixp);
  assert.deepEqual(deps.asked, ['platform', 'platform', 'platform'], 'VIXP is answered without a second lookup');
  assert.deepEqual(await resolveSettlementToken(deps, 'ethereum', { contractAddress: usdx.contractAddress }), usdx);
  assert.deepEqual(await resolveSettlementToken(deps, 'ethereum', { tokenSymbol: 'USDX' }), usdx);
  assert.deepEqual(await resolveSettlementToken(deps, 'ethereum', { contractAddress: usdx.contractAddress, tokenSymbol: 'USDX' }), usdx);
  await assert.rejects(resolveSettlementToken(deps, 'ethereum', { contractAddress: userMade.contractAddress }), { code: 'payment.token_not_accepted' });
  await assert.rejects(resolveSettlementToken(deps, 'ethereum', { tokenSymbol: 'OTHER' }), { code: 'payment.token_not_accepted' });
  await assert.rejects(resolveSettlementToken(tokenDeps([usdx, { ...userMade, tokenSymbol: 'USDX' }]), 'ethereum', { tokenSymbol: 'USDX' }), { code: 'payment.token_not_accepted' }, 'a symbol two listed tokens share names neither');
  await assert.rejects(resolveSettlementToken(deps, 'ethereum', { contractAddress: 'not-an-address' }), { code: 'request.invalid', details: 'contract_address' });
  await assert.rejects(resolveSettlementToken(deps, 'ethereum', { contractAddress: usdx.contractAddress, tokenSymbol: 'VIXP' }), { code: 'request.invalid', details: 'token_symbol' });
  await assert.rejects(resolveSettlementToken(deps, 'ethereum', { contractAddress: vixp.contractAddress, tokenSymbol: 'USDX' }), { code: 'request.invalid', details: 'token_symbol' });
});

test('a quote: the currency amount over the notice in force for the currency and the token, rounded down to the token unit, with the notice named', async () => {
  const notices = new Map([
    ['KRW:VIXP', { rate: '1350.5', noticeDate: '20261122', noticeIndex: 3 }],
    [`USD:ethereum:${usdx.contractAddress}`, { rate: '1', noticeDate: '20261121', noticeIndex: 12 }],
    [`KRW:ethereum:${usdx.contractAddress}`, { rate: '1380.25', noticeDate: '20261122', noticeIndex: 4 }],
  ]);
  const deps = {
    ...tokenDeps(), network: 'ethereum' as const, defaultCurrency: 'KRW',
    merchants: { latestRateNotice: async (currency: string, token?: RateNoticeToken) => notices.get(`${currency}:${keyOf(token)}`) as never },
  };
  const quote = await quoteTokens(deps, { exchangeAmount: '13505.00' });
  assert.deepEqual(quote, {
    contractAddress: vixp.contractAddress, tokenSymbol: 'VIXP', decimals: 18, tokenUnits: 10n * 10n ** 18n, tokenAmount: '10',
    exchangeAmount: '13505', exchangeCurrency: 'KRW', exchangeRate: '1350.5', exchangeDateIndex: '2026112200003',
  });
  const usd = await quoteTokens(deps, { exchangeAmount: '2.5', exchangeCurrency: 'USD', tokenSymbol: 'USDX' });
  assert.equal(usd.tokenUnits, 2_500_000n);
  assert.equal(usd.tokenAmount, '2.5');
  assert.equal(usd.exchangeDateIndex, '2026112100012');
  assert.equal((await quoteTokens(deps, { exchangeAmount: '1' })).tokenUnits, 740466493891151n, '1 / 1350.5 = 0.000740466493891151425…: rounded down');
  await assert.rejects(quoteTokens(deps, { exchangeAmount: '1', exchangeCurrency: 'EUR' }), { code: 'payment.no_rate_notice' });
  await assert.rejects(quoteTokens(deps, { exchangeAmount: '1', exchangeCurrency: 'USD' }), { code: 'payment.no_rate_notice' }, 'USD/USDX does not price VIXP');
  // KRW in USDX (6 decimals) at its own notice: 15000 / 1380.25 = 10.867596449…, rounded down to 10.867596.
  const krwUsdx = await quoteTokens(deps, { exchangeAmount: '15000', contractAddress: usdx.contractAddress });
  assert.deepEqual([krwUsdx.tokenUnits, krwUsdx.tokenAmount, krwUsdx.exchangeRate, krwUsdx.exchangeDateIndex, krwUsdx.decimals], [10_867_596n, '10.867596', '1380.25', '2026112200004', 6]);
  // VIXP, by its contract named explicitly, is priced by the VIXP notice.
  assert.equal((await quoteTokens(deps, { exchangeAmount: '13505', contractAddress: vixp.contractAddress })).exchangeDateIndex, '2026112200003');
  for (const currency of ['krw', 'KRWX', 'KR', '']) {
    if (currency === '') continue; // empty: the store's default currency
    await assert.rejects(quoteTokens(deps, { exchangeAmount: '1', exchangeCurrency: currency }), { code: 'request.invalid', details: 'exchange_currency' }, currency);
  }
  assert.equal((await quoteTokens(deps, { exchangeAmount: '1', exchangeCurrency: '' })).exchangeCurrency, 'KRW');
  await assert.rejects(quoteTokens(deps, { exchangeAmount: '0' }), { code: 'request.invalid', details: 'exchange_amount' });
  await assert.rejects(quoteTokens({ ...deps, defaultCurrency: 'krw' }, { exchangeAmount: '1' }), { code: 'request.invalid', details: 'exchange_currency' });
});

test('rate notices: an ISO currency, the rate in its canonical form, the day and index as yyyyMMdd + 5 digits in the platform zone', async () => {
  const inserted: unknown[] = [];
  let index = 0;
  const merchants = {
    insertRateNotice: async (n: { currency: string; noticeDate: string; rate: string; publishedAt: number }) => {
      inserted.push(n);
      return { ...n, noticeIndex: ++index } as never;
    },
  };
  const at = Date.UTC(2026, 10, 22, 15, 30); // 00:30 on the 23rd in Seoul
  const deps = { ...tokenDeps(), network: 'ethereum' as const, clock: () => at, timeZone: 'Asia/Seoul', merchants };
  assert.deepEqual(await publishRateNotice(deps, { currency: 'KRW', rate: '1350.50' }), {
    currency: 'KRW', rate: '1350.5', exchangeDateIndex: '2026112300001', publishedAt: at, contractAddress: vixp.contractAddress, tokenSymbol: 'VIXP',
  });
  assert.deepEqual(inserted, [{ currency: 'KRW', token: { platformToken: true }, noticeDate: '20261123', rate: '1350.5', publishedAt: at }]);
  for (const currency of ['krw', 'KRWX', 'K1W', '']) await assert.rejects(publishRateNotice(deps, { currency, rate: '1' }), { code: 'request.invalid', details: 'currency' }, currency);
  await assert.rejects(publishRateNotice(deps, { currency: 'KRW', rate: '-1' }), { code: 'request.invalid', details: 'rate' });
  assert.equal(inserted.length, 1, 'a refused notice is not stored');
  index = 99_998;
  assert.equal((await publishRateNotice(deps, { currency: 'KRW', rate: '1' })).exchangeDateIndex, '2026112399999');
  await assert.rejects(publishRateNotice(deps, { currency: 'KRW', rate: '1' }), { code: 'request.invalid', details: 'currency' }, 'the 100000th notice of a day');
  assert.equal(exchangeDateIndexOf('20261122', 7), '2026112200007');
});

test('rate notices per token: VIXP by default or named, an allowed token by contract or listed symbol (any transfer path); nothing else', async () => {
  const usdt = { contractAddress: getAddress('0x00000000000000000000000000000000000000c4'), tokenSymbol: 'USDT', decimals: 6, transferPath: 'account' as const };
  const inserted: Array<{ token: RateNoticeToken }> = [];
  let index = 0;
  const merchants = { insertRateNotice: async (n: { token?: RateNoticeToken }) => { inserted.push({ token: n.token! }); return { ...n, noticeIndex: ++index } as never; } };
  const deps = { ...tokenDeps([usdx, usdt]), network: 'ethereum' as const, clock: () => 0, timeZone: 'UTC', merchants };
  const published = await publishRateNotice(deps, { currency: 'KRW', rate: '1380.25', contractAddress: usdx.contractAddress.toLowerCase() });
  assert.deepEqual([published.contractAddress, published.tokenSymbol, published.rate], [usdx.contractAddress, 'USDX', '1380.25']);
  assert.equal((await publishRateNotice(deps, { currency: 'KRW', rate: '1380', tokenSymbol: 'USDX' })).contractAddress, usdx.contractAddress);
  assert.equal((await publishRateNotice(deps, { currency: 'KRW', rate: '1390', tokenSymbol: 'USDT' })).tokenSymbol, 'USDT', 'an account-path token is priced like any other');
  assert.equal((await publishRateNotice(deps, { currency: 'KRW', rate: '1350', contractAddress: vixp.contractAddress, tokenSymbol: 'VIXP' })).tokenSymbol, 'VIXP');
  // VIXP by its symbol alone, though no allow-list names it: the platform token is priced without being listed.
  assert.equal((await publishRateNotice(deps, { currency: 'KRW', rate: '1351', tokenSymbol: 'VIXP' })).contractAddress, vixp.contractAddress);
  assert.deepEqual(inserted.map((n) => keyOf(n.token)), [`ethereum:${usdx.contractAddress}`, `ethereum:${usdx.contractAddress}`, `ethereum:${usdt.contractAddress}`, 'VIXP', 'VIXP']);
  await assert.rejects(publishRateNotice(deps, { currency: 'KRW', rate: '1', contractAddress: userMade.contractAddress }), { code: 'payment.token_not_accepted' });
  await assert.rejects(publishRateNotice(deps, { currency: 'KRW', rate: '1', tokenSymbol: 'OTHER' }), { code: 'payment.token_not_accepted' });
  await assert.rejects(publishRateNotice(deps, { currency: 'KRW', rate: '1', contractAddress: 'nope' }), { code: 'request.invalid', details: 'contract_address' });
  await assert.rejects(publishRateNotice(deps, { currency: 'KRW', rate: '1', contractAddress: usdx.contractAddress, tokenSymbol: 'VIXP' }), { code: 'request.invalid', details: 'token_symbol' });
  assert.equal(inserted.length, 5, 'a refused notice is not stored');
});

test('approval numbers: the day in the platform zone and an 8-digit sequence of that day, with the date and time', async () => {
  const keys: string[] = [];
  let sequence = 41;
  const merchants = { nextNumber: async (key: string) => { keys.push(key); return ++sequence; } };
  const at = Date.UTC(2026, 10, 22, 15, 4, 5);
  assert.deepEqual(await nextApprovalNumber({ merchants, clock: () => at, timeZone: 'Asia/Seoul' }), { number: '2026112300000042', date: '20261123000405' });
  assert.deepEqual(await nextApprovalNumber({ merchants, clock: () => at, timeZone: 'UTC' }), { number: '2026112200000043', date: '20261122150405' });
  assert.deepEqual(keys, ['approval:20261123', 'approval:20261122']);
});

test('a refused amount or rate names its field and says why (resultMessage and details of the answer)', () => {
  const refusal = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return { message: (error as Error).message, details: (error as { details?: string }).details, code: (error as { code?: string }).code };
    }
    return assert.fail('not refused');
  };
  for (const bad of [12 as unknown as string, null as unknown as string, '1e3', '']) {
    assert.deepEqual(refusal(() => normalizeDecimal(bad, 'rate')), { code: 'request.invalid', details: 'rate', message: 'rate must be a positive decimal string such as "12500" or "1350.25"' });
  }
  assert.deepEqual(refusal(() => normalizeDecimal('0.00', 'rate')), { code: 'request.invalid', details: 'rate', message: 'rate must be greater than zero' });
  assert.deepEqual(refusal(() => tokenUnitsFor('0', '1', 18)), { code: 'request.invalid', details: 'exchange_amount', message: 'exchange_amount must be greater than zero' });
  assert.deepEqual(refusal(() => tokenUnitsFor('1', '0', 18)), { code: 'request.invalid', details: 'exchange_rate', message: 'exchange_rate must be greater than zero' });
  assert.deepEqual(refusal(() => tokenUnitsFor('1', '1000', 0)), { code: 'request.invalid', details: 'exchange_amount', message: 'exchange_amount is worth less than the smallest token unit' });
});

test('refusals of a token, a currency or a notice say what was refused and why', async () => {
  const deps = tokenDeps();
  const messageOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (error) {
      return (error as Error).message;
    }
    return assert.fail('not refused');
  };
  assert.equal(await messageOf(resolveSettlementToken(deps, 'ethereum', { contractAddress: userMade.contractAddress })),
    `token ${userMade.contractAddress} does not settle payments on ethereum: only VIXP or a token the operator allowed does`);
  assert.equal(await messageOf(resolveSettlementToken(deps, 'ethereum', { tokenSymbol: 'A-VERY-LONG-SYMBOL-NAME' })),
    'token_symbol "A-VERY-LONG-SYMB" without contract_address does not settle payments on ethereum: only VIXP or a token the operator allowed does');
  assert.equal(await messageOf(resolveSettlementToken(deps, 'ethereum', { contractAddress: 'x' })), 'contract_address is not a valid address');
  assert.equal(await messageOf(resolveSettlementToken(deps, 'ethereum', { contractAddress: usdx.contractAddress, tokenSymbol: 'VIXP' })), 'token_symbol does not match contract_address');
  const quoteDeps = { ...deps, network: 'ethereum' as const, defaultCurrency: 'KRW', merchants: { latestRateNotice: async () => undefined as never } };
  assert.equal(await messageOf(quoteTokens(quoteDeps, { exchangeAmount: '1', tokenSymbol: 'USDX' })),
    `no exchange-rate notice has been published for KRW in USDX (${usdx.contractAddress})`);
  assert.equal(await messageOf(quoteTokens(quoteDeps, { exchangeAmount: '1', exchangeCurrency: 'usd' })), 'exchange_currency must be an ISO 4217 code');
  assert.equal(await messageOf(quoteTokens(quoteDeps, { exchangeAmount: '1', exchangeCurrency: 'EUR' })), 'no exchange-rate notice has been published for EUR');
  let index = 99_999;
  const noticeDeps = { ...deps, network: 'ethereum' as const, clock: () => 0, timeZone: 'UTC', merchants: { insertRateNotice: async (n: object) => ({ ...n, noticeIndex: ++index }) as never } };
  assert.equal(await messageOf(publishRateNotice(noticeDeps, { currency: 'krw', rate: '1' })), 'currency must be an ISO 4217 code such as KRW');
  assert.equal(await messageOf(publishRateNotice(noticeDeps, { currency: 'KRW', rate: '1' })), 'no more than 99999 notices a day per currency');
  const allowList = "is not a token of ethereum's allow-list: a rate notice prices VIXP or a token the operator allowed (vixpay token allow)";
  assert.equal(await messageOf(publishRateNotice(noticeDeps, { currency: 'KRW', rate: '1', contractAddress: userMade.contractAddress })), `token ${userMade.contractAddress} ${allowList}`);
  assert.equal(await messageOf(publishRateNotice(noticeDeps, { currency: 'KRW', rate: '1', tokenSymbol: 'A-VERY-LONG-SYMBOL-NAME' })),
    `token_symbol "A-VERY-LONG-SYMB" without contract_address ${allowList}`);
  assert.equal(await messageOf(publishRateNotice(noticeDeps, { currency: 'KRW', rate: '1', contractAddress: 'x' })), 'contract_address is not a valid address');
  assert.equal(await messageOf(publishRateNotice(noticeDeps, { currency: 'KRW', rate: '1', contractAddress: usdx.contractAddress, tokenSymbol: 'VIXP' })),
    'token_symbol does not match contract_address');
});
