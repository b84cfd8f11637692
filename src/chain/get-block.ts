import { BlockNotFoundError, hexToBigInt, numberToHex, type Block, type BlockTag, type Hex } from 'viem';
import { DomainError } from '../shared/errors.ts';
import type { ChainClients } from './chain-clients.ts';
import type { NetworkName } from '../shared/networks.ts';

/** Which block: latest when omitted; a number, a hex number, a tag, or a block hash. */
export type GetBlockParameters = [] | [number | string];

/** SPEC.md's block record. Quantities are bigint here and JSON numbers on the wire, with a `...Raw` hex twin. */
export interface BlockRecord {
  totalDifficulty: bigint | null; totalDifficultyRaw: Hex | null;
  receiptsRoot: Hex; extraData: Hex;
  number: bigint; numberRaw: Hex;
  baseFeePerGas: bigint | null;
  sealFields: null; author: null;
  miner: Hex;
  gasLimit: bigint; gasLimitRaw: Hex;
  gasUsed: bigint; gasUsedRaw: Hex;
  uncles: Hex[]; sha3Uncles: Hex;
  nonce: bigint; nonceRaw: Hex;
  size: bigint; sizeRaw: Hex;
  timestamp: bigint; timestampRaw: Hex;
  difficulty: bigint; difficultyRaw: Hex;
  logsBloom: Hex; transactions: Hex[]; transactionsRoot: Hex; stateRoot: Hex; mixHash: Hex; parentHash: Hex; hash: Hex;
}

const blockTags = new Set<string>(['latest', 'earliest', 'pending', 'safe', 'finalized']);

type BlockSelector = { blockNumber: bigint } | { blockHash: Hex } | { blockTag: BlockTag };

export function parseBlockSelector(params: GetBlockParameters): BlockSelector {
  if (params.length === 0) return { blockTag: 'latest' };
  const [which] = params;
  if (typeof which === 'number') {
    if (Number.isSafeInteger(which) && which >= 0) return { blockNumber: BigInt(which) };
  } else if (typeof which === 'string') {
    if (blockTags.has(which)) return { blockTag: which as BlockTag };
    if (/^0x[0-9a-fA-F]{64}$/.test(which)) return { blockHash: which as Hex };
    if (/^0x[0-9a-fA-F]{1,16}$/.test(which)) return { blockNumber: hexToBigInt(which as Hex) };
    if (/^(0|[1-9]\d{0,18})$/.test(which)) return { blockNumber: BigInt(which) };
  }
  throw new DomainError('request.invalid', 'block must be a number, a 0x hex number, a block tag such as "latest", or a block hash');
}

export async function getBlock(chains: ChainClients, network: NetworkName, params: GetBlockParameters): Promise<BlockRecord> {
  const selector = parseBlockSelector(params);
  let block: Block;
  try {
    block = await chains[network].client.getBlock({ ...selector, includeTransactions: false });
  } catch (cause) {
    if (cause instanceof BlockNotFoundError) throw new DomainError('block.not_found', 'no such block', { cause });
    throw new DomainError('chain.unavailable', `network ${network} did not answer`, { cause });
  }
  return toBlockRecord(block);
}

export function toBlockRecord(block: Block): BlockRecord {
  const quantity = (value: bigint) => numberToHex(value);
  const nonceRaw = block.nonce ?? '0x0000000000000000';
  const number = block.number ?? 0n;
  const totalDifficulty = block.totalDifficulty ?? null;
  return {
    totalDifficulty, totalDifficultyRaw: totalDifficulty === null ? null : quantity(totalDifficulty),
    receiptsRoot: block.receiptsRoot, extraData: block.extraData,
    number, numberRaw: quantity(number),
    baseFeePerGas: block.baseFeePerGas ?? null,
    sealFields: null, author: null,
    miner: block.miner,
    gasLimit: block.gasLimit, gasLimitRaw: quantity(block.gasLimit),
    gasUsed: block.gasUsed, gasUsedRaw: quantity(block.gasUsed),
    uncles: block.uncles, sha3Uncles: block.sha3Uncles,
    nonce: hexToBigInt(nonceRaw), nonceRaw,
    size: block.size, sizeRaw: quantity(block.size),
    timestamp: block.timestamp, timestampRaw: quantity(block.timestamp),
    difficulty: block.difficulty, difficultyRaw: quantity(block.difficulty),
    logsBloom: block.logsBloom ?? '0x', transactions: block.transactions as Hex[], transactionsRoot: block.transactionsRoot,
    stateRoot: block.stateRoot, mixHash: block.mixHash, parentHash: block.parentHash, hash: block.hash ?? '0x',
  };
}
