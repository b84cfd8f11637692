import type { Hex } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { createAddress } from './create-address.ts';
import { importAddress, type ImportAddressParameters } from './import-address.ts';
import { issueTempKey, type IssueTempKeyParameters } from './temp-key.ts';
import { signData, type SignDataParameters } from './sign-data.ts';
import { transfer, type TransferParameters } from './transfer.ts';
import { createToken, type CreateTokenParameters } from './create-token.ts';
import { getBalance, type GetBalanceParameters } from './get-balance.ts';
import { getTokenInfo } from './get-token-info.ts';
import { mint } from './mint.ts';
import { transferFromCustody, type TransferFromCustodyParameters } from './transfer-from-custody.ts';
import { outcomeOf } from './transfer-outcome.ts';
import { resolveAuthorization, sweepExpiredAuthorizations } from './resolve-authorization.ts';
import { retryUnsent, retryUnsentOf } from './unsent-reservations.ts';
import { attemptTransfer, operationTransfer, type TransferAttempt } from './operation-transfer.ts';

/** The custodial wallet with its dependencies bound: what transports and other domains call. */
export function createWalletService(deps: WalletDeps) {
  return {
    createAddress: () => createAddress(deps),
    importAddress: (params: ImportAddressParameters) => importAddress(deps, params),
    issueTempKey: (params: IssueTempKeyParameters) => issueTempKey(deps, params),
    signData: (params: SignDataParameters) => signData(deps, params),
    /** A transfer by docs/interfaces.md#key-scheme's scheme; never throws: see TransferOutcome. */
    transfer: (network: NetworkName, params: TransferParameters) => outcomeOf(transfer(deps, network, params)),
    createToken: (network: NetworkName, params: CreateTokenParameters) => createToken(deps, network, params),
    getBalance: (network: NetworkName, params: GetBalanceParameters) => getBalance(deps, network, params),
    getTokenInfo: (network: NetworkName, params: { tokenSymbol?: string; contractAddress?: string }) => getTokenInfo(deps, network, params),
    mint: (network: NetworkName, params: { to: string; amount: string }) => mint(deps, network, params),
    /** Platform-initiated transfer from a custodial account we hold (refunds, reward payouts). */
    transferFromCustody: (network: NetworkName, params: TransferFromCustodyParameters) => outcomeOf(transferFromCustody(deps, network, params)),
    /**
     * How the transfer of an operation (by its reference) ended, settling it on chain if it can;
     * `void` when none was signed, and then none can be (operation-transfer.ts).
     */
    transferOutcome: async (network: NetworkName, reference: string) => {
      // A reservation the full disk kept from being sent, undone first: it then never was (`void`).
      await retryUnsentOf(deps.authorizations, network, reference);
      const record = await operationTransfer(deps.authorizations, network, reference, deps.clock());
      return record ? resolveAuthorization(deps, network, record.nonce as Hex) : { status: 'void' as const };
    },
    /** The same for an attempt of an operation whose references are `<prefix><attempt>`. */
    attemptTransferOutcome: async (network: NetworkName, attempt: TransferAttempt) => {
      await retryUnsentOf(deps.authorizations, network, attempt.reference);
      const record = await attemptTransfer(deps.authorizations, network, attempt, deps.clock());
      return record ? resolveAuthorization(deps, network, record.nonce as Hex) : { status: 'void' as const };
    },
    sweepExpiredAuthorizations: async (network: NetworkName) => {
      // Reservations the full disk kept from being sent and from being undone: undone once it has room.
      await retryUnsent(deps.authorizations).catch(() => undefined);
      return sweepExpiredAuthorizations(deps, network);
    },
  };
}

export type WalletService = ReturnType<typeof createWalletService>;
