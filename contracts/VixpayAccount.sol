// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/**
 * @title VIXP account: the code a custodial account delegates to (EIP-7702)
 * @notice An account whose key the platform holds delegates once to this contract; from then on a
 * relayer can make the account move any ERC-20 it holds to a payee, the account itself being the
 * token's `msg.sender` (no approval, no permit, no gas of the account's own), but only with the
 * account's own signature over an EIP-712 message
 *
 *     domain   ("VixpayAccount", "1", chainId, verifyingContract = the account)
 *     Transfer(address token, address to, uint256 amount, uint256 nonce, uint256 deadline)
 *
 * which names the chain and the account (the domain), the token, payee, amount, a nonce and a
 * deadline (the last second it executes in). A nonce is used once: executed or cancelled
 * (`cancelNonce`, signed `CancelNonce(uint256 nonce)` in the same domain). Nonces are unordered, 256 to
 * a storage word as bits: an account numbering its nonces 0, 1, 2… writes a fresh word once per 256
 * transfers, and any nonce may execute before a lower one.
 *
 * `isValidSignature` (ERC-1271) answers for the account's own key: a delegated account has code, so a
 * token checking signatures with OpenZeppelin's SignatureChecker (EIP-3009 on VIXP, USDC 2.2) asks it
 * instead of recovering the signer itself; an EIP-3009 authorization or cancellation the key signed,
 * before delegation or after, is still accepted. It is the key's own ECDSA signature of the hash, as
 * the token would have recovered it: delegation gives nobody a signature the key did not make.
 *
 * Nothing else is callable, by anyone: no call of the account's choosing, no approval, no owner. Plain
 * ETH sent to the account is accepted, as it was before delegation. The key can still send the
 * account's own transactions.
 *
 * @dev Storage in the ERC-7201 namespace `vixpay.account`, so that code the account delegated to
 * before (or delegates to later) does not collide with it. The domain is computed per call from
 * `block.chainid` and `address(this)`: this code runs as each account, so nothing account-specific can
 * be an immutable. The code deployed at its own address has no key: no signature verifies there.
 */
contract VixpayAccount is IERC1271 {
    // Hash constants as literals, so that assembly can use them; the tests check each against its preimage.
    /// @dev keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    bytes32 private constant DOMAIN_TYPEHASH = 0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f;
    /// @dev keccak256("VixpayAccount")
    bytes32 private constant NAME_HASH = 0xc5417bfb42e83253abbe6df4ae3e282c0c777a1178d40ecf1573df2a0dc6931a;
    /// @dev keccak256("1")
    bytes32 private constant VERSION_HASH = 0xc89efdaa54c0f20c7adf612882df0950f5a951637e0307cdcb4c672f298b8bc6;

    /// @notice keccak256("Transfer(address token,address to,uint256 amount,uint256 nonce,uint256 deadline)")
    bytes32 public constant TRANSFER_TYPEHASH = 0x77c25fee6120c86834885664b6aaaf90e323cf8ddfa8a9c137e7650568a3ae5b;
    bytes32 public constant CANCEL_NONCE_TYPEHASH = keccak256("CancelNonce(uint256 nonce)");

    /// @custom:storage-location erc7201:vixpay.account
    struct AccountStorage {
        /// @dev nonce >> 8 => bit (nonce & 255) set once the nonce is used or cancelled
        mapping(uint256 word => uint256 bits) usedNonces;
    }

    /// @dev keccak256(abi.encode(uint256(keccak256("vixpay.account")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant STORAGE_LOCATION = 0x1709bfa831e0687188724a783edd4a971951bd1d9342fb75724b91f8b98f2000;

    /// @notice The account cancelled `nonce`: nothing it signed with it executes.
    event NonceCancelled(uint256 indexed nonce);

    /// @notice `block.timestamp` is past the signed `deadline`.
    error Expired(uint256 deadline);

    /// @notice `nonce` was already used or cancelled.
    error NonceAlreadyUsed(uint256 nonce);

    /// @notice The signature is not the account's own of this message on this chain.
    error InvalidSignature();

    /// @notice The token reverted, answered something other than `true`, or has no code.
    error TokenTransferFailed(address token);

    /// @notice Moves `amount` of `token` from this account to `to`, as the account signed it.
    /// Callable by anyone holding the signature (a relayer). Answers its own selector, so that a
    /// caller can tell this code ran (a call to an account without it succeeds doing nothing). Emits
    /// nothing of its own: the token's `Transfer` is the record, `nonceUsed(nonce)` the state.
    /// @param vs EIP-2098: `s` with the recovery bit (`v - 27`) on top
    function signedTransfer(address token, address to, uint256 amount, uint256 nonce, uint256 deadline, bytes32 r, bytes32 vs)
        external
        returns (bytes4)
    {
        // One assembly block, the same steps as `cancelNonce` and `_requireOwnSignature` take in
        // Solidity (deadline, nonce, EIP-712 digest, the key's low-s ECDSA signature, the token's
        // transfer as SafeERC20's trySafeTransfer checks it), without their calls and copies: this is
        // every transfer's path (docs/decisions/tokens.md has the gas it saved).
        assembly ("memory-safe") {
            function fail(errorSelector, word) {
                mstore(0, shl(224, errorSelector))
                mstore(4, word)
                revert(0, 0x24)
            }
            function invalidSignature() {
                mstore(0, shl(224, 0x8baa579f)) // InvalidSignature()
                revert(0, 4)
            }
            if gt(timestamp(), deadline) { fail(0xf80dbaea, deadline) } // Expired(uint256)
            // usedNonces[nonce >> 8] |= 1 << (nonce & 255), unless set already.
            mstore(0, shr(8, nonce))
            mstore(0x20, STORAGE_LOCATION)
            let slot := keccak256(0, 0x40)
            let bits := sload(slot)
            let bit := shl(and(nonce, 0xff), 1)
            if and(bits, bit) { fail(0x91cab504, nonce) } // NonceAlreadyUsed(uint256)
            sstore(slot, or(bits, bit))
            // keccak256(abi.encode(TRANSFER_TYPEHASH, token, to, amount, nonce, deadline)) and the
            // domain separator, in memory past the free memory pointer (not allocated).
            let m := mload(0x40)
            mstore(m, TRANSFER_TYPEHASH)
            mstore(add(m, 0x20), token)
            mstore(add(m, 0x40), to)
            mstore(add(m, 0x60), amount)
            mstore(add(m, 0x80), nonce)
            mstore(add(m, 0xa0), deadline)
            let structHash := keccak256(m, 0xc0)
            mstore(m, DOMAIN_TYPEHASH)
            mstore(add(m, 0x20), NAME_HASH)
            mstore(add(m, 0x40), VERSION_HASH)
            mstore(add(m, 0x60), chainid())
            mstore(add(m, 0x80), address())
            let domainSeparator := keccak256(m, 0xa0)
            // "\x19\x01" ‖ domainSeparator ‖ structHash (MessageHashUtils.toTypedDataHash)
            mstore(m, shl(240, 0x1901))
            mstore(add(m, 0x02), domainSeparator)
            mstore(add(m, 0x22), structHash)
            let digest := keccak256(m, 0x42)
            // ecrecover(digest, v, r, s) from EIP-2098's vs; s above half the curve order is refused, as ECDSA.tryRecover does.
            let sValue := and(vs, 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff)
            if gt(sValue, 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0) { invalidSignature() }
            mstore(m, digest)
            mstore(add(m, 0x20), add(shr(255, vs), 27))
            mstore(add(m, 0x40), r)
            mstore(add(m, 0x60), sValue)
            mstore(0, 0)
            // The precompile answers nothing for a signature it cannot recover: 0 stays, never this account.
            // (Yul evaluates arguments right to left: the call first, then its answer is read.)
            let recovered := staticcall(gas(), 1, m, 0x80, 0, 0x20)
            if iszero(and(recovered, eq(mload(0), address()))) { invalidSignature() }
            // token.transfer(to, amount): succeeded, and answered true or nothing from a contract (USDT answers nothing).
            mstore(m, shl(224, 0xa9059cbb))
            mstore(add(m, 0x04), to)
            mstore(add(m, 0x24), amount)
            mstore(0, 0)
            let success := call(gas(), token, 0, m, 0x44, 0, 0x20)
            if iszero(and(success, and(eq(mload(0), 1), gt(returndatasize(), 0x1f)))) {
                if iszero(and(success, and(iszero(returndatasize()), gt(extcodesize(token), 0)))) { fail(0x2b596cb7, token) } // TokenTransferFailed(address)
            }
            mstore(0, shl(224, 0xb8acfdcd)) // signedTransfer's selector
            return(0, 0x20)
        }
    }

    /// @notice Cancels `nonce`, as the account signed it. Callable by anyone holding the signature.
    function cancelNonce(uint256 nonce, bytes32 r, bytes32 vs) external {
        _useNonce(nonce);
        _requireOwnSignature(keccak256(abi.encode(CANCEL_NONCE_TYPEHASH, nonce)), r, vs);
        emit NonceCancelled(nonce);
    }

    /// @notice Whether `nonce` was used or cancelled.
    function nonceUsed(uint256 nonce) external view returns (bool) {
        return _storage().usedNonces[nonce >> 8] & (1 << (nonce & 0xff)) != 0;
    }

    /// @notice ERC-1271: whether `signature` (65 bytes, `r || s || v`, low `s`) is the account's own
    /// key's signature of `hash`.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError recoverError,) = ECDSA.tryRecoverCalldata(hash, signature);
        return recoverError == ECDSA.RecoverError.NoError && signer == address(this) ? this.isValidSignature.selector : bytes4(0xffffffff);
    }

    /// @notice Plain ETH is accepted, as before delegation.
    receive() external payable {}

    function _useNonce(uint256 nonce) private {
        mapping(uint256 => uint256) storage used = _storage().usedNonces;
        uint256 bit = 1 << (nonce & 0xff);
        uint256 bits = used[nonce >> 8];
        if (bits & bit != 0) revert NonceAlreadyUsed(nonce);
        used[nonce >> 8] = bits | bit;
    }

    function _requireOwnSignature(bytes32 structHash, bytes32 r, bytes32 vs) private view {
        bytes32 domainSeparator;
        assembly ("memory-safe") {
            // keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)))
            let m := mload(0x40)
            mstore(m, DOMAIN_TYPEHASH)
            mstore(add(m, 0x20), NAME_HASH)
            mstore(add(m, 0x40), VERSION_HASH)
            mstore(add(m, 0x60), chainid())
            mstore(add(m, 0x80), address())
            domainSeparator := keccak256(m, 0xa0)
        }
        (address signer, ECDSA.RecoverError recoverError,) =
            ECDSA.tryRecover(MessageHashUtils.toTypedDataHash(domainSeparator, structHash), r, vs);
        if (recoverError != ECDSA.RecoverError.NoError || signer != address(this)) revert InvalidSignature();
    }

    function _storage() private pure returns (AccountStorage storage $) {
        assembly ("memory-safe") {
            $.slot := STORAGE_LOCATION
        }
    }
}
