// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/**
 * @title Trial transfers of a token, run inside an `eth_call` only
 * @notice Never deployed: `vixpay token allow` sets this code on a holder of the token for one
 * `eth_call` (a state override), so the token sees the holder as `msg.sender` and nothing is sent.
 * `trials` transfers each amount to `payee` from this account and answers, per amount, the sender's
 * and the payee's balances before and after (four words an amount): a token that moves anything else
 * than the amount (a fee on transfer, shares rounded through a rebasing index) shows it there.
 * @dev A transfer that reverts or answers `false` reverts the call (`TrialFailed(amount)`); one that
 * answers nothing (USDT on Ethereum) counts as done, as OpenZeppelin's SafeERC20 does.
 */
contract TokenProbe {
    error TrialFailed(uint256 amount);

    function trials(address token, address payee, uint256[] calldata amounts) external returns (uint256[] memory balances) {
        balances = new uint256[](amounts.length * 4);
        for (uint256 i = 0; i < amounts.length; i++) {
            balances[i * 4] = _balanceOf(token, address(this));
            balances[i * 4 + 1] = _balanceOf(token, payee);
            (bool ok, bytes memory answer) = token.call(abi.encodeWithSelector(0xa9059cbb, payee, amounts[i]));
            if (!ok || (answer.length != 0 && (answer.length != 32 || abi.decode(answer, (uint256)) != 1))) {
                revert TrialFailed(amounts[i]);
            }
            balances[i * 4 + 2] = _balanceOf(token, address(this));
            balances[i * 4 + 3] = _balanceOf(token, payee);
        }
    }

    function _balanceOf(address token, address account) private view returns (uint256) {
        (bool ok, bytes memory answer) = token.staticcall(abi.encodeWithSelector(0x70a08231, account));
        require(ok && answer.length == 32);
        return abi.decode(answer, (uint256));
    }
}
