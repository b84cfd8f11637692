import { encodeFunctionData, parseAbi, parseSignature, signatureToCompactSignature, toHex, type Hex } from 'viem';
import type { SettlementItem } from '../../src/chain/relay-types.ts';

// The settlement calldata of the release before issue 37 (`VixpSettlement-3`): `settle(Group[])`,
// standard ABI, seven words an item (from, to, value, window, nonce, r, vs), 226 bytes a transfer at
// 100 items. Kept to measure the packed layout against it in the same run.

const earlierAbi = parseAbi([
  'struct Item { address from; address to; uint256 value; bytes32 window; bytes32 nonce; bytes32 r; bytes32 vs; }',
  'struct Group { address token; Item[] items; }',
  'function settle(Group[] groups) returns (uint256 executed)',
]);

const half = (1n << 128n) - 1n;

/** `items` as the earlier release encoded a batch of them. */
export function earlierLayoutCalldata(items: readonly SettlementItem[]): Hex {
  const groups = new Map<string, { token: Hex; items: { from: Hex; to: Hex; value: bigint; window: Hex; nonce: Hex; r: Hex; vs: Hex }[] }>();
  for (const item of items) {
    const group = groups.get(item.token.toLowerCase()) ?? { token: item.token, items: [] };
    groups.set(item.token.toLowerCase(), group);
    const { r, yParityAndS } = signatureToCompactSignature(parseSignature(item.signature));
    const before = item.validBefore === (1n << 256n) - 1n ? half : item.validBefore;
    group.items.push({ from: item.from, to: item.to, value: item.value, window: toHex(((item.validAfter ?? 0n) << 128n) | before, { size: 32 }), nonce: item.nonce, r, vs: yParityAndS });
  }
  return encodeFunctionData({ abi: earlierAbi, functionName: 'settle', args: [[...groups.values()]] });
}
