// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/**
 * @title VIXP settlement: many EIP-3009 transfer authorizations in one transaction
 * @notice Executes each authorization on its own: an item that fails (expired, already used or
 * cancelled, bad signature, balance too low) is skipped and never reverts the others. An item
 * executed emits the token's own `Transfer` and `AuthorizationUsed(authorizer, nonce)` events in this
 * transaction's receipt: that is how a caller learns its item's outcome. A skipped item emits
 * `ItemSkipped(index, nonce)`; its authorization is untouched and stays usable until it is
 * cancelled or expires, exactly as if it had been submitted alone and reverted.
 *
 * Calldata: `settle(bytes batch)`, the batch packed for chains that price calldata by its compressed
 * size (OP-stack: FastLZ, Fjord) as well as by its bytes (16 gas a non-zero byte everywhere). Only
 * what no compressor can shrink is sent in full (each payer's address and signature); the rest is
 * sent once per batch (token, payees) or as a short integer:
 *
 *     batch   := groupCount:1  group*
 *     group   := token:20  payeeCount:1  payee:20 × payeeCount  itemCount:2  item*
 *     item    := kind:1  (kind 0) from:20  payee:1  exponent:1  uint(mantissa)  uint(validAfter)
 *                uint(validBefore)  uint(nonce)  r:32  vs:32
 *     uint(x) := length:1  x as `length` big-endian bytes (0 to 32; 0 is x = 0)
 *
 * `payee` indexes the group's payee table; `value` is `mantissa × 10^exponent` (1.25 tokens of 18
 * decimals: mantissa 125, exponent 16, three bytes); `validBefore` 2^256 − 1 is 32 bytes of ones. The
 * platform's own nonces are counters (src/wallet/authorization-nonce.ts): 7 bytes, not 32. `r` and
 * `vs` are the EIP-2098 compact signature: `vs` is `s` with the recovery bit (`v - 27`) in its top
 * bit, which a low `s` always leaves free. A custodial payer's item is about 105 bytes, an x402
 * payer's (random 32-byte nonce, a `validAfter`) about 135: the earlier ABI layout sent 226.
 *
 * `kind` keeps the layout open: 0 is an EIP-3009 `transferWithAuthorization(v, r, s)`; a later
 * release (another way of paying, e.g. an EIP-7702 account's) adds kinds with their own fields. An
 * unknown kind, a payee index outside its table, a length over 32 or a batch that does not end
 * where its last item does reverts the whole batch (`MalformedBatch`): nothing is executed.
 *
 * Item `index` in `ItemSkipped` and `BatchGasTooLow` counts items across groups, in calldata order.
 *
 * @dev Anyone may call it: an EIP-3009 authorization is executable by anyone and pays only its
 * signed payee, so a caller gains nothing by front-running a batch, and a wrong field only makes its
 * item's signature check fail (skipped). Each item runs with a fixed gas allowance; the batch
 * reverts as a whole (nothing executed) when the transaction's gas cannot cover the next item, so a
 * too-low gas limit never turns into items skipped for lack of gas. A batch of one costs more here
 * than the token's own `transferWithAuthorization` called directly: the platform sends a batch of
 * one to the token directly. Each item's call is encoded by hand into scratch memory past the free
 * memory pointer (reused by every item, never allocated), the token's code checked once per group.
 */
contract VixpSettlement {
    /// @notice Gas each item may use: an EIP-3009 transfer to a fresh payee costs ~75,000.
    uint256 public constant ITEM_GAS = 150_000;

    /// @notice Item `index` (authorization `nonce`) was not executed; nothing of it happened.
    event ItemSkipped(uint256 indexed index, bytes32 indexed nonce);

    /// @notice The transaction's gas cannot cover item `index`: the whole batch is reverted.
    error BatchGasTooLow(uint256 index);

    /// @notice A group names an address without contract code: the whole batch is reverted.
    error NotAToken(address token);

    /// @notice The batch is not in the layout above at calldata offset `offset`: the whole batch is reverted.
    error MalformedBatch(uint256 offset);

    /// @notice Executes every item it can; answers how many were executed.
    function settle(bytes calldata batch) external returns (uint256 executed) {
        // Decoded by hand, in one pass over the batch: each item's call is written into scratch
        // memory past the free memory pointer (reused by every item, never allocated).
        assembly ("memory-safe") {
            // Selectors as literals (a Solidity local each would not fit the stack): the tests decode
            // each error and event by the ABI, so a wrong one fails them.
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
            // MalformedBatch(uint256) is 0x70ac562d, ItemSkipped(uint256,bytes32) 0x19a0a028…
            // transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)
            mstore(m, 0xe3ee160e00000000000000000000000000000000000000000000000000000000)
            let p := batch.offset
            let index := 0
            let groups := byte(0, calldataload(p))
            p := add(p, 1)
            for { let g := 0 } lt(g, groups) { g := add(g, 1) } {
                let token := shr(96, calldataload(p))
                // A call to an address without code would succeed without doing anything.
                if iszero(extcodesize(token)) { fail(0xf0ae59ab, token) } // NotAToken(address)
                let payees := byte(0, calldataload(add(p, 20)))
                let table := add(p, 21)
                p := add(table, mul(payees, 20))
                let items := shr(240, calldataload(p))
                p := add(p, 2)
                for { let i := 0 } lt(i, items) { i := add(i, 1) } {
                    // 63/64 of what is left is forwarded: keep enough that the call gets its full allowance.
                    // ITEM_GAS * 64 / 63 + 10,000 at least, or BatchGasTooLow(uint256).
                    if lt(gas(), 162380) { fail(0x482ecb8a, index) }
                    // kind:1 from:20 payee:1 exponent:1, then the mantissa's length-prefixed bytes.
                    let head := calldataload(p)
                    if byte(0, head) { fail(0x70ac562d, p) } // kind 0 only, in this release
                    let payee := byte(21, head)
                    if iszero(lt(payee, payees)) { fail(0x70ac562d, p) }
                    mstore(add(m, 0x04), and(shr(88, head), 0xffffffffffffffffffffffffffffffffffffffff)) // from
                    mstore(add(m, 0x24), shr(96, calldataload(add(table, mul(payee, 20))))) // to
                    let q := field(add(p, 23), add(m, 0x44)) // value's mantissa
                    mstore(add(m, 0x44), mul(mload(add(m, 0x44)), exp(10, byte(22, head)))) // value
                    q := field(q, add(m, 0x64)) // validAfter
                    q := field(q, add(m, 0x84)) // validBefore
                    q := field(q, add(m, 0xa4)) // nonce
                    let vs := calldataload(add(q, 32))
                    mstore(add(m, 0xc4), add(shr(255, vs), 27)) // v
                    mstore(add(m, 0xe4), calldataload(q)) // r
                    mstore(add(m, 0x104), and(vs, 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff)) // s
                    p := add(q, 64)
                    switch call(ITEM_GAS, token, 0, m, 0x124, 0, 0)
                    case 0 { log3(0, 0, 0x19a0a0287f936511b379ddbd6cc1725916c76e3752929589bcd64da6cb12c234, index, mload(add(m, 0xa4))) }
                    default { executed := add(executed, 1) }
                    index := add(index, 1)
                }
            }
            if iszero(eq(p, add(batch.offset, batch.length))) { fail(0x70ac562d, p) }
        }
    }
}
