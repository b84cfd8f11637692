// `npm run bench`: the platform's speed and memory goals, measured on the embedded default.
// Each part is bounded in count and size and talks to loopback only.
import { benchTokenTransfers } from './token-transfers.ts';
import { benchPayments } from './payments.ts';
import { benchIpfsUpload } from './ipfs-upload.ts';

const results = {
  tokenTransfers: await benchTokenTransfers(),
  payments: await benchPayments(),
  ipfsUpload: await benchIpfsUpload(),
};
console.log(JSON.stringify(results, null, 2));
