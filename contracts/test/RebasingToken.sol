// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/**
 * @title A rebasing token (balances are shares × an index the owner moves), for the tests only
 * @notice As stETH or AMPL: a transfer moves `value / index` shares, so a payee's balance changes by
 * the amount rounded through the index, and every balance moves at each rebase. The platform must
 * refuse it (a held amount would not stay what was paid).
 */
contract RebasingToken {
    string public constant name = "Rebasing Token";
    string public constant symbol = "REB";
    uint8 public constant decimals = 18;
    address public owner;
    /// @notice Balance per share, scaled by 1e18.
    uint256 public index;
    uint256 private _totalShares;
    mapping(address account => uint256) private _shares;
    mapping(address holder => mapping(address spender => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(uint256 initialSupply, uint256 initialIndex) {
        owner = msg.sender;
        index = initialIndex;
        _mint(msg.sender, initialSupply);
    }

    function totalSupply() external view returns (uint256) { return _totalShares * index / 1e18; }

    function balanceOf(address account) public view returns (uint256) { return _shares[account] * index / 1e18; }

    function rebase(uint256 newIndex) external {
        require(msg.sender == owner, "caller is not the owner");
        index = newIndex;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "caller is not the owner");
        _mint(to, amount);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        require(allowance[from][msg.sender] >= value, "allowance");
        allowance[from][msg.sender] -= value;
        _move(from, to, value);
        return true;
    }

    function _mint(address to, uint256 amount) private {
        uint256 shares = amount * 1e18 / index;
        _shares[to] += shares;
        _totalShares += shares;
        emit Transfer(address(0), to, amount);
    }

    function _move(address from, address to, uint256 value) private {
        uint256 shares = value * 1e18 / index;
        require(_shares[from] >= shares, "balance");
        _shares[from] -= shares;
        _shares[to] += shares;
        emit Transfer(from, to, value);
    }
}
