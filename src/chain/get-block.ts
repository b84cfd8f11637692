import { BlockNotFoundError, hexToBigInt, numberToHex, type Block, type BlockTag, type Hex } from 'viem';
import { DomainError } from '#shared/errors.ts';
import type { ChainClients } from './chain-clients.ts';
import type { NetworkName } from '#shared/networks.ts';

/** Which block: latest when omitted; a number, a hex number, a tag, or a block hash. */
export type GetBlockParameters = [] | [number | string];

/** docs/interfaces.md#block-api's block record. Quantities are bigint here and JSON numbers on the wire, with a `...Raw` hex twin. */
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

async function fetchBlock(chains: ChainClients, network: NetworkName, selector: BlockSelector): Promise<Block> {
  try {
    return await chains[network].client.getBlock({ ...selector, includeTransactions: false });
  } catch (cause) {
    if (cause instanceof BlockNotFoundError) throw new DomainError('block.not_found', 'no such block', { cause });
    throw new DomainError('chain.unavailable', `network ${network} did not answer`, { cause });
  }
}

/** `getBlock` with the blocks that can no longer change kept in memory (see createBlockReader). */
export type BlockReader = (network: NetworkName, params: GetBlockParameters) => Promise<BlockRecord>;

export interface BlockReaderOptions {
  /** Per network: the `CONFIRMATIONS` setting. A block with that many blocks on top is kept. */
  confirmations: Readonly<Record<NetworkName, number>>;
  /** Blocks kept per network, the least recently asked dropped first. */
  maxBlocks?: number;
}

/**
 * `getBlock` that answers an old block from memory. A block asked by number or hash is fetched
 * together with the head (one batched round trip); once it has `confirmations` blocks on top (one
 * more than a receipt needs to be final, docs/operations.md) it can no longer change, and its record
 * (frozen) is kept under its number and its hash. Tags (`latest`, `safe`, …) always ask the node.
 * Concurrent asks for the same block share one fetch.
 *
 * @example
 * const read = createBlockReader(chains, { confirmations: config.confirmations });
 * const block = await read('ethereum', [1]);
 */
export function createBlockReader(chains: ChainClients, options: BlockReaderOptions): BlockReader {
  const maxBlocks = options.maxBlocks ?? 256;
  const kept = new Map<NetworkName, Map<string, BlockRecord>>();
  const fetching = new Map<string, Promise<BlockRecord>>();

  const keep = (network: NetworkName, record: BlockRecord) => {
    let blocks = kept.get(network);
    if (!blocks) kept.set(network, blocks = new Map());
    for (const key of [`n:${record.number}`, `h:${record.hash.toLowerCase()}`]) {
      blocks.delete(key);
      blocks.set(key, record);
    }
    // Two keys per block.
    while (blocks.size > maxBlocks * 2) blocks.delete(blocks.keys().next().value as string);
  };

  const fetchAndKeep = async (network: NetworkName, selector: BlockSelector): Promise<BlockRecord> => {
    const client = chains[network].client;
    // A head read earlier (viem caches it for its polling interval) is lower: it never lets a block in too soon.
    const [block, head] = await Promise.all([fetchBlock(chains, network, selector), client.getBlockNumber().catch(() => undefined)]);
    const record = toBlockRecord(block);
    if (head !== undefined && block.number !== null && head - block.number >= BigInt(options.confirmations[network])) {
      keep(network, deepFreeze(record));
    }
    return record;
  };

  return async (network, params) => {
    const selector = parseBlockSelector(params);
    if ('blockTag' in selector) return toBlockRecord(await fetchBlock(chains, network, selector));
    const key = 'blockNumber' in selector ? `n:${selector.blockNumber}` : `h:${selector.blockHash.toLowerCase()}`;
    const blocks = kept.get(network);
    const hit = blocks?.get(key);
    if (hit) {
      blocks!.delete(key);
      blocks!.set(key, hit);
      return hit;
    }
    const fetchKey = `${network}/${key}`;
    let pending = fetching.get(fetchKey);
    if (!pending) {
      pending = fetchAndKeep(network, selector).finally(() => fetching.delete(fetchKey));
      fetching.set(fetchKey, pending);
    }
    return pending;
  };
}

function deepFreeze(record: BlockRecord): BlockRecord {
  Object.freeze(record.uncles);
  Object.freeze(record.transactions);
  return Object.freeze(record);
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
