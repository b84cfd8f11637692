import type { Migration } from 'kysely';
import * as foundation from './0001-foundation.ts';
import * as identity from './0002-identity.ts';
import * as did from './0003-did.ts';
import * as payments from './0004-payments.ts';
import * as settlementTokens from './0005-settlement-tokens.ts';
import * as authorizations from './0006-authorizations.ts';
import * as idempotency from './0007-idempotency.ts';
import * as fleet from './0011-fleet.ts';
import * as webhooks from './0009-webhooks.ts';
import * as receiptsConsole from './0010-receipts-console.ts';
import * as chainTxVersions from './0012-chain-tx-versions.ts';
import * as staleOperations from './0013-stale-operations.ts';
import * as chainTxPositions from './0014-chain-tx-positions.ts';
import * as webhookAllowPrivate from './0015-webhook-allow-private.ts';
import * as chainTxGas from './0016-chain-tx-gas.ts';
import * as authorizationTxHash from './0017-authorization-tx-hash.ts';
import * as x402 from './0018-x402.ts';
import * as statements from './0019-statements.ts';
import * as x402StatementLines from './0020-x402-statement-lines.ts';
import * as x402ExactValidBefore from './0021-x402-exact-valid-before.ts';
import * as x402AuthorizerNonces from './0022-x402-authorizer-nonces.ts';
import * as x402ValidAfter from './0023-x402-valid-after.ts';
import * as x402SettleAnswers from './0024-x402-settle-answers.ts';
import * as ipfsBlocks from './0025-ipfs-blocks.ts';
import * as chainTxL1Fees from './0026-chain-tx-l1-fees.ts';
import * as settlementTokenShapes from './0027-settlement-token-shapes.ts';
import * as rateNoticeTokens from './0028-rate-notice-tokens.ts';
import * as stalePayments from './0029-stale-payments.ts';

/** Every migration, in order. Each domain adds its own file and one line here. */
export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-identity': identity,
  '0003-did': did,
  '0004-payments': payments,
  '0005-settlement-tokens': settlementTokens,
  '0006-authorizations': authorizations,
  '0007-idempotency': idempotency,
  '0009-webhooks': webhooks,
  '0010-receipts-console': receiptsConsole,
  '0011-fleet': fleet,
  '0012-chain-tx-versions': chainTxVersions,
  '0013-stale-operations': staleOperations,
  '0014-chain-tx-positions': chainTxPositions,
  '0015-webhook-allow-private': webhookAllowPrivate,
  '0016-chain-tx-gas': chainTxGas,
  '0017-authorization-tx-hash': authorizationTxHash,
  '0018-x402': x402,
  '0019-statements': statements,
  '0020-x402-statement-lines': x402StatementLines,
  '0021-x402-exact-valid-before': x402ExactValidBefore,
  '0022-x402-authorizer-nonces': x402AuthorizerNonces,
  '0023-x402-valid-after': x402ValidAfter,
  '0024-x402-settle-answers': x402SettleAnswers,
  '0025-ipfs-blocks': ipfsBlocks,
  '0026-chain-tx-l1-fees': chainTxL1Fees,
  '0027-settlement-token-shapes': settlementTokenShapes,
  '0028-rate-notice-tokens': rateNoticeTokens,
  '0029-stale-payments': stalePayments,
};
