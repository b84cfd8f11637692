// The Hardhat configuration test/hardhat-node.test.ts starts its node with
// (`hardhat --config test/support/hardhat.config.ts node`): Hardhat's defaults, chain id 31337,
// automine. Hardhat refuses to run without a config file of the project's own.
export default {};
