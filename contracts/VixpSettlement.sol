// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The EIP-3009 entry point the settlement calls: the `(v, r, s)` form (as in USDC v2.2).
interface IERC3009 {
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;
}

/**
 * @title VIXP settlement: many EIP-3009 transfer authorizations in one transaction
 * @notice Executes each authorization on its own: an item that fails (expired, already used or
 * cancelled, bad signature, balance too low) is skipped and never reverts the others. An item
 * executed emits the token's own `Transfer` and `AuthorizationUsed(authorizer, nonce)` events in this
 * transaction's receipt: that is how a caller learns its item's outcome. A skipped item emits
 * `ItemSkipped(index, nonce)`; its authorization is untouched and stays usable until it is
 * cancelled or expires, exactly as if it had been submitted alone and reverted.
 *
 * Calldata layout (standard ABI encoding of `settle(Group[])`, every field one static 32-byte word):
 *
 *     0x00  4 B   selector of settle((address,(address,address,uint256,bytes32,bytes32,bytes32,bytes32)[])[])
 *     0x04  32 B  offset of the groups array            } once per batch: 68 B
 *           32 B  number of groups                      }
 *     per group, one per token in the batch: 128 B
 *           32 B  offset of the group
 *           32 B  token                (each token once per batch, not once per item)
 *           32 B  offset of the items array
 *           32 B  number of items
 *     per item: 224 B (7 words)
 *           from, to, value, window, nonce, r, vs
 *
 * `window` carries both validity bounds in one word: `validAfter` in its upper 128 bits,
 * `validBefore` in its lower 128 bits (a `bytes32`, so `settle`'s selector differs from the
 * earlier layout's, whose fourth word was `uint256 validBefore`), where all ones (2^128 − 1) stands for 2^256 − 1 (the
 * "never expires" some clients sign). Any timestamp fits: a bound in between (2^128 − 1 up to
 * 2^256 − 2) cannot be carried, and the platform refuses such an authorization before it is
 * accepted. The platform's own authorizations have `validAfter` 0; x402 clients sign any
 * (`now − 600` for many), which the token checks against the block as for any call. `r` and `vs` are the EIP-2098 compact signature: `vs` is `s`
 * with the recovery bit (`v - 27`) in its top bit, which a low `s` always leaves free. A batch of
 * 100 items of one token is 68 + 128 + 100 × 224 = 22,596 bytes, 226 per item (the earlier layout
 * repeated the token, a zero `validAfter` and a dynamic 65-byte signature: 417 per item).
 *
 * Item `index` in `ItemSkipped` and `BatchGasTooLow` counts items across groups, in calldata order.
 *
 * @dev Anyone may call it: an EIP-3009 authorization is executable by anyone and pays only its
 * signed payee, so a caller gains nothing by front-running a batch. Each item runs with a fixed gas
 * allowance; the batch reverts as a whole (nothing executed) when the transaction's gas cannot
 * cover the next item, so a too-low gas limit never turns into items skipped for lack of gas.
 * A batch of one costs more here than the token's own `transferWithAuthorization` called directly
 * (this call and its calldata on top): the platform sends a batch of one to the token directly.
 * Each item's call is encoded by hand: the same call as a high-level
 * `try IERC3009(token).transferWithAuthorization{gas: ITEM_GAS}(...)` that skips the item in its
 * `catch`, without a fresh memory allocation per item and with the token's code checked once per
 * group instead of once per call (662 gas less per item at 100 items). `from` and `to` are passed
 * as sent: an address word with dirty upper bits makes the token's decoder revert, so that item is
 * skipped.
 */
contract VixpSettlement {
    /// @notice One authorization with its EIP-2098 compact signature `(r, vs)`; `window` is
    /// `validAfter << 128 | validBefore` (validBefore 2^128 − 1 standing for 2^256 − 1).
    struct Item {
        address from;
        address to;
        uint256 value;
        bytes32 window;
        bytes32 nonce;
        bytes32 r;
        bytes32 vs;
    }

    /// @notice The items of one token.
    struct Group {
        address token;
        Item[] items;
    }

    /// @notice Gas each item may use: an EIP-3009 transfer to a fresh payee costs ~75,000.
    uint256 public constant ITEM_GAS = 150_000;

    /// @notice Item `index` (authorization `nonce`) was not executed; nothing of it happened.
    event ItemSkipped(uint256 indexed index, bytes32 indexed nonce);

    /// @notice The transaction's gas cannot cover item `index`: the whole batch is reverted.
    error BatchGasTooLow(uint256 index);

    /// @notice A group names an address without contract code: the whole batch is reverted.
    error NotAToken(address token);

    /// @notice Executes every item it can; answers how many were executed.
    function settle(Group[] calldata groups) external returns (uint256 executed) {
        uint256 index = 0;
        bytes4 selector = IERC3009.transferWithAuthorization.selector;
        for (uint256 g = 0; g < groups.length; ++g) {
            address token = groups[g].token;
            // A call to an address without code would succeed without doing anything.
            if (token.code.length == 0) revert NotAToken(token);
            Item[] calldata items = groups[g].items;
            for (uint256 i = 0; i < items.length; ++i) {
                // 63/64 of what is left is forwarded: keep enough that the call gets its full allowance.
                if (gasleft() < (ITEM_GAS * 64) / 63 + 10_000) revert BatchGasTooLow(index);
                Item calldata item = items[i];
                bool ok;
                // transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, v, r, s), encoded
                // in scratch memory past the free memory pointer (reused by every item, never allocated).
                assembly ("memory-safe") {
                    let p := mload(0x40)
                    mstore(p, selector)
                    calldatacopy(add(p, 0x04), item, 0x60) // from, to, value
                    let window := calldataload(add(item, 0x60))
                    mstore(add(p, 0x64), shr(128, window)) // validAfter
                    let before := and(window, 0xffffffffffffffffffffffffffffffff)
                    if eq(before, 0xffffffffffffffffffffffffffffffff) { before := not(0) }
                    mstore(add(p, 0x84), before) // validBefore
                    mstore(add(p, 0xa4), calldataload(add(item, 0x80))) // nonce
                    let vs := calldataload(add(item, 0xc0))
                    mstore(add(p, 0xc4), add(shr(255, vs), 27)) // v
                    mstore(add(p, 0xe4), calldataload(add(item, 0xa0))) // r
                    mstore(add(p, 0x104), and(vs, 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff)) // s
                    ok := call(ITEM_GAS, token, 0, p, 0x124, 0, 0)
                }
                if (ok) ++executed;
                else emit ItemSkipped(index, item.nonce);
                ++index;
            }
        }
    }
}
