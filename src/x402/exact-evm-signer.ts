import type { Address } from 'viem';
import type { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { ChainClient } from '../chain/chain-clients.ts';

type FacilitatorEvmSigner = ConstructorParameters<typeof ExactEvmScheme>[0];

const settlesElsewhere = () => Promise.reject(new Error('the platform settles through its batching relayer, never through this signer'));

/**
 * The published `exact` EVM facilitator's signer over one of our networks, for verification only:
 * reads, signature checks and code lookups go to the network's node; the writing half refuses
 * (settlement goes through the relayer's batches: settle-payment.ts).
 */
export function verifyingSigner(chain: ChainClient, lanes: readonly Address[]): FacilitatorEvmSigner {
  const { client } = chain;
  return {
    getAddresses: () => lanes,
    readContract: (args) => client.readContract(args as Parameters<typeof client.readContract>[0]),
    verifyTypedData: (args) => client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    getCode: (args) => client.getCode(args),
    writeContract: settlesElsewhere,
    sendTransaction: settlesElsewhere,
    waitForTransactionReceipt: settlesElsewhere,
  };
}
