// A new buyer account: `eval "$(npx node docs/examples/x402/new-buyer.ts)"` sets both variables.
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';

const key = generatePrivateKey();
console.log(`export BUYER_PRIVATE_KEY=${key}`);
console.log(`export BUYER_ADDRESS=${privateKeyToAddress(key)}`);
