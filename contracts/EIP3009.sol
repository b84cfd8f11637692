// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/**
 * @title EIP-3009: Transfer With Authorization
 * @notice Lets a token holder sign a transfer off-chain (EIP-712 typed data) that anyone, typically a
 * relayer paying the gas, can submit. Authorizations carry a random 32-byte nonce instead of a
 * sequential one, so a holder can have any number of them outstanding and they can be submitted in
 * any order. Same type hashes, function names and events as USDC (FiatToken v2.2), so existing
 * EIP-3009 tooling works unchanged.
 *
 * @dev Uses the EIP-712 domain of the inheriting token (ERC20Permit sets it to `EIP712(name, "1")`).
 * Signatures are checked with {SignatureChecker.isValidSignatureNow}: an EOA's ECDSA signature
 * (low-s only) or, when the authorizer is a contract, its ERC-1271 `isValidSignature` answer.
 * Each function exists with `(v, r, s)` and with a packed `bytes signature`, as in USDC; the
 * `(v, r, s)` form is packed as `r || s || v` and takes the same path.
 */
abstract contract EIP3009 is ERC20, EIP712 {
    // The type hashes are compile-time constants; their values equal USDC's
    // (0x7c7c6cdb..., 0xd099cc98..., 0x158b0a9e...), which the tests check.

    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );

    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );

    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH = keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");

    /// @dev authorizer => nonce => used or canceled
    mapping(address authorizer => mapping(bytes32 nonce => bool used)) private _authorizationStates;

    /// @notice An authorization was executed; its nonce cannot be used again.
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);

    /// @notice An authorization was canceled before use; its nonce cannot be used again.
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    /// @notice `block.timestamp` is not after `validAfter` yet.
    error AuthorizationNotYetValid(uint256 validAfter);

    /// @notice `block.timestamp` is not before `validBefore` any more.
    error AuthorizationExpired(uint256 validBefore);

    /// @notice The nonce was already used or canceled by `authorizer`.
    error AuthorizationAlreadyUsed(address authorizer, bytes32 nonce);

    /// @notice The signature is not `authorizer`'s signature of this authorization.
    error InvalidAuthorizationSignature(address authorizer);

    /// @notice receiveWithAuthorization must be submitted by the payee (`to`), so that a front-runner
    /// who sees the authorization in the mempool cannot redirect the call into a different context.
    error CallerIsNotPayee(address caller, address payee);

    /// @notice Whether `authorizer` has used or canceled the authorization with `nonce`.
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    /// @notice Executes a transfer signed by `from`. Callable by anyone.
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
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v)
        );
    }

    /// @notice Executes a transfer signed by `from`, with a packed ECDSA or an ERC-1271 signature.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _transferWithAuthorization(
            TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature
        );
    }

    /// @notice Executes a transfer signed by `from`. Only the payee `to` may submit it.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _requirePayeeIsCaller(to);
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v)
        );
    }

    /// @notice Executes a transfer signed by `from`, with a packed ECDSA or an ERC-1271 signature.
    /// Only the payee `to` may submit it.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _requirePayeeIsCaller(to);
        _transferWithAuthorization(
            RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, signature
        );
    }

    /// @notice Cancels an unused authorization of `authorizer`. Callable by anyone holding the signature.
    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        _cancelAuthorization(authorizer, nonce, abi.encodePacked(r, s, v));
    }

    /// @notice Cancels an unused authorization of `authorizer`, with a packed ECDSA or an ERC-1271 signature.
    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        _cancelAuthorization(authorizer, nonce, signature);
    }

    /// @dev Shared by transfer and receive: they differ only in the type hash and the caller check.
    /// Checks run cheapest first; the nonce is marked used before the transfer (checks-effects).
    function _transferWithAuthorization(
        bytes32 typeHash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        if (block.timestamp <= validAfter) revert AuthorizationNotYetValid(validAfter);
        if (block.timestamp >= validBefore) revert AuthorizationExpired(validBefore);
        _requireUnusedAuthorization(from, nonce);
        _requireValidSignature(
            from, keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce)), signature
        );

        _authorizationStates[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) private {
        _requireUnusedAuthorization(authorizer, nonce);
        _requireValidSignature(authorizer, keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce)), signature);

        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function _requireUnusedAuthorization(address authorizer, bytes32 nonce) private view {
        if (_authorizationStates[authorizer][nonce]) revert AuthorizationAlreadyUsed(authorizer, nonce);
    }

    function _requirePayeeIsCaller(address payee) private view {
        if (payee != _msgSender()) revert CallerIsNotPayee(_msgSender(), payee);
    }

    /// @dev `structHash` is hashed into the token's EIP-712 domain before checking the signature.
    function _requireValidSignature(address authorizer, bytes32 structHash, bytes memory signature) private view {
        if (!SignatureChecker.isValidSignatureNow(authorizer, _hashTypedDataV4(structHash), signature)) {
            revert InvalidAuthorizationSignature(authorizer);
        }
    }
}
