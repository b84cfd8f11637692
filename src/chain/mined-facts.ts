import { parseAbi, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { paysOperatorFee, type MinedFacts } from './mined-receipt.ts';

/** OP stack's GasPriceOracle predeploy: its `getOperatorFee` applies the formula of the chain's fork (Isthmus, Jovian). */
const gasPriceOracle = '0x420000000000000000000000000000000000000F';
const gasPriceOracleAbi = parseAbi(['function getOperatorFee(uint256 gasUsed) view returns (uint256)']);

/** Blocks whose time is kept: more than a few blocks' receipts are never recorded at once. */
const keptBlocks = 64;

/**
 * What the relayer records beside a mined receipt, read from the chain once per block: the block's
 * time from its header (`eth_getBlockByHash`, shared by every receipt of that block and by concurrent
 * asks), and, where the receipt's operator fee parameters are set (OP stack since Isthmus), the
 * operator fee from the GasPriceOracle at that block (the formula differs by fork; the predeploy
 * knows its own). A block the node does not answer for leaves its time unknown (recorded NULL).
 */
export function createMinedFacts(
  client: PublicClient,
  /** A block's time (s) already known, from a pushed header: no call for it. */
  knownTime?: (blockHash: Hex) => bigint | undefined,
): (receipt: TransactionReceipt) => Promise<MinedFacts> {
  const times = new Map<Hex, Promise<number | undefined>>();

  const timeOf = (blockHash: Hex): Promise<number | undefined> => {
    const known = knownTime?.(blockHash);
    if (known !== undefined) return Promise.resolve(Number(known));
    let time = times.get(blockHash);
    if (!time) {
      time = client.getBlock({ blockHash, includeTransactions: false }).then((block) => Number(block.timestamp), () => {
        times.delete(blockHash); // asked again for the next receipt of it
        return undefined;
      });
      times.set(blockHash, time);
      while (times.size > keptBlocks) times.delete(times.keys().next().value as Hex);
    }
    return time;
  };

  const operatorFeeOf = (receipt: TransactionReceipt): Promise<bigint | undefined> => !paysOperatorFee(receipt)
    ? Promise.resolve(undefined)
    : client.readContract({
      address: gasPriceOracle, abi: gasPriceOracleAbi, functionName: 'getOperatorFee', args: [receipt.gasUsed], blockNumber: receipt.blockNumber,
    }).catch(() => undefined);

  return async (receipt) => {
    const [blockTimestamp, operatorFeeWei] = await Promise.all([timeOf(receipt.blockHash), operatorFeeOf(receipt)]);
    return { blockTimestamp, operatorFeeWei };
  };
}
