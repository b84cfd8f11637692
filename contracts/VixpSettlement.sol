// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The EIP-3009 entry point the settlement calls (the packed-signature form, as in USDC v2.2).
interface IERC3009 {
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
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
 * @dev Anyone may call it: an EIP-3009 authorization is executable by anyone and pays only its
 * signed payee, so a caller gains nothing by front-running a batch. Each item runs with a fixed gas
 * allowance; the batch reverts as a whole (nothing executed) when the transaction's gas cannot
 * cover the next item, so a too-low gas limit never turns into items skipped for lack of gas.
 */
contract VixpSettlement {
    struct Authorization {
        address token;
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
        bytes signature;
    }

    /// @notice Gas each item may use: an EIP-3009 transfer to a fresh payee costs ~75,000.
    uint256 public constant ITEM_GAS = 150_000;

    /// @notice Item `index` (authorization `nonce`) was not executed; nothing of it happened.
    event ItemSkipped(uint256 indexed index, bytes32 indexed nonce);

    /// @notice The transaction's gas cannot cover item `index`: the whole batch is reverted.
    error BatchGasTooLow(uint256 index);

    /// @notice Executes every item it can; answers how many were executed.
    function settle(Authorization[] calldata items) external returns (uint256 executed) {
        for (uint256 i = 0; i < items.length; ++i) {
            // 63/64 of what is left is forwarded: keep enough that the call gets its full allowance.
            if (gasleft() < (ITEM_GAS * 64) / 63 + 10_000) revert BatchGasTooLow(i);
            Authorization calldata item = items[i];
            try IERC3009(item.token).transferWithAuthorization{gas: ITEM_GAS}(
                item.from, item.to, item.value, item.validAfter, item.validBefore, item.nonce, item.signature
            ) {
                ++executed;
            } catch {
                emit ItemSkipped(i, item.nonce);
            }
        }
    }
}
