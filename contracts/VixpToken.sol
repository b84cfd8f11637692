// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {EIP3009} from "./EIP3009.sol";

/**
 * @title VIXP token
 * @notice ERC-20 (18 decimals) with gasless approvals (EIP-2612 `permit`) and gasless transfers
 * (EIP-3009 `transferWithAuthorization`): holders only sign, the platform relayer submits and pays gas.
 * The owner (the platform treasury) can mint.
 * @dev ERC20Permit sets the EIP-712 domain to `(name, "1", chainId, address(this))`; EIP3009 signs in
 * the same domain, so one wallet configuration serves both.
 */
contract VixpToken is ERC20, ERC20Permit, EIP3009, Ownable {
    /// @param name_ token name, also the EIP-712 domain name
    /// @param initialOwner receives `initialSupply` and the right to mint
    /// @param initialSupply in base units (10**18 per token); 0 mints nothing
    constructor(string memory name_, string memory symbol_, address initialOwner, uint256 initialSupply)
        ERC20(name_, symbol_)
        ERC20Permit(name_)
        Ownable(initialOwner)
    {
        if (initialSupply > 0) _mint(initialOwner, initialSupply);
    }

    /// @notice Creates `amount` base units for `to`.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
