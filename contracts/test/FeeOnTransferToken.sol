// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/**
 * @title A fee-on-transfer token (1% of each transfer to the owner), for the tests only
 * @notice A payee receives less than the amount sent: the platform must refuse it (a store would be
 * short of every payment).
 */
contract FeeOnTransferToken is ERC20 {
    address public owner;

    constructor(uint256 initialSupply) ERC20("Fee Token", "FEE") {
        owner = msg.sender;
        _mint(msg.sender, initialSupply);
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "caller is not the owner");
        _mint(to, amount);
    }

    function _update(address from, address to, uint256 value) internal override {
        if (from == address(0) || to == address(0)) return super._update(from, to, value);
        uint256 fee = value / 100;
        super._update(from, owner, fee);
        super._update(from, to, value - fee);
    }
}
