// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * @title A plain BEP-20 (18 decimals), shaped like the Binance-pegged dollars, for the tests only
 * @notice OpenZeppelin's ERC-20 (`transfer` returns `true`) with BEP-20's `getOwner`; no EIP-2612, no
 * EIP-3009. The owner mints.
 */
contract Bep20Like is ERC20 {
    address public owner;

    constructor(string memory name_, string memory symbol_, uint256 initialSupply) ERC20(name_, symbol_) {
        owner = msg.sender;
        if (initialSupply > 0) _mint(msg.sender, initialSupply);
    }

    function getOwner() external view returns (address) { return owner; }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "caller is not the owner");
        _mint(to, amount);
    }
}
