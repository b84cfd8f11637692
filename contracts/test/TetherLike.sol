// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/**
 * @title A token shaped like Ethereum's USDT (TetherToken), for the tests only
 * @notice 6 decimals. `transfer`, `transferFrom` and `approve` return nothing, as USDT's on Ethereum
 * (it predates ERC-20's `bool`): a caller that decodes a `bool` from them reverts. No EIP-2612
 * `permit`, no EIP-3009. The owner issues, pauses and blacklists; a blacklisted sender or a paused
 * token reverts a transfer with no reason, as USDT's `require`s do.
 */
contract TetherLike {
    string public name;
    string public symbol;
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    address public owner;
    bool public paused;
    mapping(address account => uint256) public balanceOf;
    mapping(address holder => mapping(address spender => uint256)) public allowance;
    mapping(address account => bool) public isBlackListed;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint256 initialSupply) {
        owner = msg.sender;
        name = name_;
        symbol = symbol_;
        totalSupply = initialSupply;
        balanceOf[msg.sender] = initialSupply;
        emit Transfer(address(0), msg.sender, initialSupply);
    }

    modifier onlyOwner() {
        require(msg.sender == owner);
        _;
    }

    modifier whenNotPaused() {
        require(!paused);
        _;
    }

    function transfer(address to, uint256 value) external whenNotPaused {
        require(!isBlackListed[msg.sender]);
        _move(msg.sender, to, value);
    }

    function transferFrom(address from, address to, uint256 value) external whenNotPaused {
        require(!isBlackListed[from]);
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value);
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - value;
        _move(from, to, value);
    }

    /// @notice As USDT: changing a non-zero allowance to another non-zero one reverts (set it to 0 first).
    function approve(address spender, uint256 value) external {
        require(!((value != 0) && (allowance[msg.sender][spender] != 0)));
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    /// @notice Creates `amount` for `to` (USDT's `issue` credits the owner; the tests mint to anyone).
    function mint(address to, uint256 amount) external onlyOwner {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function pause() external onlyOwner { paused = true; }

    function unpause() external onlyOwner { paused = false; }

    function addBlackList(address account) external onlyOwner { isBlackListed[account] = true; }

    function removeBlackList(address account) external onlyOwner { isBlackListed[account] = false; }

    function _move(address from, address to, uint256 value) private {
        require(to != address(0));
        require(balanceOf[from] >= value);
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
