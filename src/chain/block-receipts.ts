import { formatTransactionReceipt, numberToHex, TimeoutError, TransactionReceiptNotFoundError, type Hex, type PublicClient, type RpcTransactionReceipt, type TransactionReceipt } from 'viem';

/** How the receipt watcher reads receipts: a block's all at once where the node can, else one by one. */
export interface BlockReceipts {
  /** The receipts of `hashes` already mined (those the node does not answer for are left out). */
  lookUp(hashes: Hex[]): Promise<TransactionReceipt[]>;
  /**
   * The receipts of `block` (`eth_getBlockReceipts`); on a node that lacks it (Hardhat's), from then
   * on those of the hashes still waited for (`waited`), one call each.
   */
  ofBlock(block: bigint, waited: () => Hex[]): Promise<TransactionReceipt[]>;
}

export function createBlockReceipts(client: PublicClient): BlockReceipts {
  let blockReceipts = true;

  async function lookUp(hashes: Hex[]): Promise<TransactionReceipt[]> {
    // Not mined yet is no receipt; a node that did not answer (or only nodes behind did) fails the look-up, to be tried again.
    const receipts = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash }).catch((error: unknown) => {
      if (error instanceof TransactionReceiptNotFoundError) return undefined;
      throw error;
    })));
    return receipts.filter((r): r is TransactionReceipt => r !== undefined);
  }

  return {
    lookUp,
    async ofBlock(block, waited) {
      if (blockReceipts) {
        try {
          const raw = await client.request({ method: 'eth_getBlockReceipts', params: [numberToHex(block)] } as never) as RpcTransactionReceipt[] | null;
          return (raw ?? []).map((r) => formatTransactionReceipt(r));
        } catch (error) {
          if (error instanceof TimeoutError) throw error; // not answered (only nodes behind did): next poll
          blockReceipts = false; // this node lacks it (Hardhat's): look each waiter up instead
        }
      }
      return lookUp(waited());
    },
  };
}
