/** EIP-1559 fees of a transaction. */
export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** geth and anvil replace a pooled transaction only for at least 10% more on both fees: 12.5% clears it after rounding. */
const bump = (fee: bigint) => (fee * 9n + 7n) / 8n;

/**
 * The fees of a replacement of a transaction signed with `old`: each at least twice the node's
 * current estimate and 12.5% above the old one, the fee cap no higher than `maxFeePerGas`.
 * `capped` when the ceiling lowered it; undefined when at the ceiling no replacement the node would
 * accept is possible (the old fee cap is already there).
 */
export function replacementFees(old: Fees, estimate: Fees, ceiling: bigint): (Fees & { capped: boolean }) | undefined {
  const wanted = {
    maxFeePerGas: max(estimate.maxFeePerGas * 2n, bump(old.maxFeePerGas)),
    maxPriorityFeePerGas: max(estimate.maxPriorityFeePerGas * 2n, bump(old.maxPriorityFeePerGas)),
  };
  // Stryker disable next-line EqualityOperator: `>=` is equivalent (at equality both are the same fee)
  const maxFeePerGas = wanted.maxFeePerGas > ceiling ? ceiling : wanted.maxFeePerGas;
  // Stryker disable next-line EqualityOperator: `>=` is equivalent (at equality both are the same fee)
  const maxPriorityFeePerGas = wanted.maxPriorityFeePerGas > maxFeePerGas ? maxFeePerGas : wanted.maxPriorityFeePerGas;
  // The tip then clears its own bump too: it is its bumped estimate or, capped, this fee cap, at least
  // the old fee cap's bump, which is at least the old tip's (no transaction's tip is above its fee cap).
  if (maxFeePerGas < bump(old.maxFeePerGas)) return undefined;
  return { maxFeePerGas, maxPriorityFeePerGas, capped: maxFeePerGas < wanted.maxFeePerGas };
}

// Stryker disable next-line EqualityOperator: `>=` is equivalent (at equality both are the same fee)
const max = (a: bigint, b: bigint) => (a > b ? a : b);
