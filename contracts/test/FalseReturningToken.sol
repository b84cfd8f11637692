// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/**
 * @title A token whose `transfer` answers `false` instead of reverting, for the tests only
 * @notice Some early ERC-20s signal a failed transfer so (a balance too low); a caller that does not
 * check the answer takes it for a transfer made. Anyone mints.
 */
contract FalseReturningToken {
    mapping(address account => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        if (balanceOf[msg.sender] < value) return false;
        balanceOf[msg.sender] -= value;
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }
}
