// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/**
 * @title VIXP account settlement: many accounts' own signed transfers in one transaction
 * @notice The batch a relayer lane sends for custodial accounts delegated (EIP-7702) to
 * contracts/VixpayAccount.sol: each item is `account.signedTransfer(token, payee, value, nonce,
 * deadline, r, vs)`, executed on its own. An item that fails (signature, nonce or deadline refused,
 * balance moved away, token paused, payer blacklisted, account not delegated to VixpayAccount) is
 * skipped with `ItemSkipped(index, nonce)` and never reverts the others; its nonce stays unused. An
 * item executed emits the token's `Transfer` (from the account) and nothing else: item `index` of a
 * successful transaction executed exactly when no `ItemSkipped` names it (the account's
 * `nonceUsed(nonce)` says so later).
 *
 * Calldata: `settle(bytes batch)`, packed as VixpSettlement's (contracts/VixpSettlement.sol has why):
 *
 *     batch   := groupCount:1  group*
 *     group   := token:20  payeeCount:1  payee:20 × payeeCount  itemCount:2  item*
 *     item    := account:20  payee:1  exponent:1  uint(mantissa)  uint(nonce)  uint(deadline)  r:32  vs:32
 *     uint(x) := length:1  x as `length` big-endian bytes (0 to 32; 0 is x = 0)
 *
 * `value` is `mantissa × 10^exponent`; `r`, `vs` the account key's EIP-2098 compact signature. A
 * payee index outside its table, a length over 32 or a batch that does not end where its last item
 * does reverts the whole batch (`MalformedBatch`), as does a group whose token has no code
 * (`NotAToken`). Item `index` counts items across groups, in calldata order.
 *
 * @dev A contract of its own rather than an entry of VixpSettlement: an entry there (or an item kind
 * of `settle`) changed the gas of every EIP-3009 batch (docs/decisions/tokens.md). Anyone may call
 * it: an item pays only the payee its account signed, once. An item counts as executed only when the
 * account's call succeeds and answers `signedTransfer`'s selector: a call to an account that never
 * delegated, or delegated elsewhere, can succeed doing nothing. Each item runs with a fixed gas
 * allowance; the batch reverts as a whole (nothing executed) when the transaction's gas cannot cover
 * the next item, so a too-low gas limit never turns into items skipped for lack of gas.
 */
contract VixpAccountSettlement {
    /// @notice Gas each item may use: a transfer that writes a fresh nonce word costs ~45,000.
    uint256 public constant ITEM_GAS = 150_000;

    /// @notice Item `index` (the account's `nonce`) was not executed; nothing of it happened.
    event ItemSkipped(uint256 indexed index, bytes32 indexed nonce);

    /// @notice The transaction's gas cannot cover item `index`: the whole batch is reverted.
    error BatchGasTooLow(uint256 index);

    /// @notice A group names an address without contract code: the whole batch is reverted.
    error NotAToken(address token);

    /// @notice The batch is not in the layout above at calldata offset `offset`: the whole batch is reverted.
    error MalformedBatch(uint256 offset);

    /// @notice Executes every item it can; answers how many were executed.
    function settle(bytes calldata batch) external returns (uint256 executed) {
        // Decoded by hand in one pass, each item's call written into scratch memory past the free
        // memory pointer (reused by every item, never allocated), as in VixpSettlement.
        assembly ("memory-safe") {
            function fail(errorSelector, word) {
                mstore(0, shl(224, errorSelector))
                mstore(4, word)
                revert(0, 0x24)
            }
            // The length-prefixed unsigned integer at q, stored at `slot`; answers where the next field
            // starts. A length over 32 reads as 0 and moves past the batch's end: `MalformedBatch` below.
            function field(q, slot) -> next {
                let length := byte(0, calldataload(q))
                mstore(slot, shr(shl(3, sub(32, length)), calldataload(add(q, 1))))
                next := add(add(q, 1), length)
            }
            let m := mload(0x40)
            // signedTransfer(address,address,uint256,uint256,uint256,bytes32,bytes32)
            mstore(m, 0xb8acfdcd00000000000000000000000000000000000000000000000000000000)
            let p := batch.offset
            let index := 0
            let groups := byte(0, calldataload(p))
            p := add(p, 1)
            for { let g := 0 } lt(g, groups) { g := add(g, 1) } {
                let token := shr(96, calldataload(p))
                if iszero(extcodesize(token)) { fail(0xf0ae59ab, token) } // NotAToken(address)
                mstore(add(m, 0x04), token)
                let payees := byte(0, calldataload(add(p, 20)))
                let table := add(p, 21)
                p := add(table, mul(payees, 20))
                let items := shr(240, calldataload(p))
                p := add(p, 2)
                for { let i := 0 } lt(i, items) { i := add(i, 1) } {
                    // 63/64 of what is left is forwarded: keep enough that the call gets its full allowance.
                    // ITEM_GAS * 64 / 63 + 10,000 at least, or BatchGasTooLow(uint256).
                    if lt(gas(), 162380) { fail(0x482ecb8a, index) }
                    // account:20 payee:1 exponent:1, then the mantissa's length-prefixed bytes.
                    let head := calldataload(p)
                    let payee := byte(20, head)
                    if iszero(lt(payee, payees)) { fail(0x70ac562d, p) } // MalformedBatch(uint256)
                    mstore(add(m, 0x24), shr(96, calldataload(add(table, mul(payee, 20))))) // to
                    let q := field(add(p, 22), add(m, 0x44)) // value's mantissa
                    mstore(add(m, 0x44), mul(mload(add(m, 0x44)), exp(10, byte(21, head)))) // value
                    q := field(q, add(m, 0x64)) // nonce
                    q := field(q, add(m, 0x84)) // deadline
                    mstore(add(m, 0xa4), calldataload(q)) // r
                    mstore(add(m, 0xc4), calldataload(add(q, 32))) // vs
                    p := add(q, 64)
                    let done := call(ITEM_GAS, shr(96, head), 0, m, 0xe4, 0, 0x20)
                    // ItemSkipped(uint256,bytes32) unless the account's code ran and answered its selector.
                    switch and(done, and(eq(returndatasize(), 0x20), eq(mload(0), shl(224, 0xb8acfdcd))))
                    case 0 { log3(0, 0, 0x19a0a0287f936511b379ddbd6cc1725916c76e3752929589bcd64da6cb12c234, index, mload(add(m, 0x64))) }
                    default { executed := add(executed, 1) }
                    index := add(index, 1)
                }
            }
            if iszero(eq(p, add(batch.offset, batch.length))) { fail(0x70ac562d, p) }
        }
    }
}
