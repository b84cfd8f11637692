// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {EIP3009} from "../EIP3009.sol";

/**
 * @title A token shaped like USDC (FiatToken v2.2), for the tests only
 * @notice 6 decimals, EIP-3009 in the EIP-712 domain `("USD Coin", "2")` as USDC's, with the same type
 * hashes and events (contracts/EIP3009.sol; signatures checked by OpenZeppelin's SignatureChecker, so
 * a payer with code is asked ERC-1271, as USDC 2.2 does). No EIP-2612 here: the platform never uses
 * it. The owner mints, pauses and blacklists with USDC's revert reasons.
 */
contract UsdcLike is ERC20, EIP3009 {
    address public owner;
    bool public paused;
    mapping(address account => bool) public isBlacklisted;

    constructor(uint256 initialSupply) ERC20("USD Coin", "USDC") EIP712("USD Coin", "2") {
        owner = msg.sender;
        if (initialSupply > 0) _mint(msg.sender, initialSupply);
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "caller is not the owner");
        _;
    }

    function decimals() public pure override returns (uint8) { return 6; }

    /// @notice The EIP-712 domain's version, as USDC answers it.
    function version() external pure returns (string memory) { return "2"; }

    function mint(address to, uint256 amount) external onlyOwner { _mint(to, amount); }

    function pause() external onlyOwner { paused = true; }

    function unpause() external onlyOwner { paused = false; }

    function blacklist(address account) external onlyOwner { isBlacklisted[account] = true; }

    function unBlacklist(address account) external onlyOwner { isBlacklisted[account] = false; }

    function _update(address from, address to, uint256 value) internal override {
        require(!paused, "Pausable: paused");
        require(!isBlacklisted[from] && !isBlacklisted[to], "Blacklistable: account is blacklisted");
        super._update(from, to, value);
    }
}
