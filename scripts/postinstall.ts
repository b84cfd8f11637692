/**
 * `npm install`'s postinstall. npm may run on an older Node.js than the project's own (the `node`
 * devDependency pins 24, and npm scripts run on it), and then it silently skips optional native
 * binaries whose engines need a newer one: Hardhat's EDR (`@nomicfoundation/edr-<platform>`, Node ≥ 22).
 * When that binary does not load, the install runs once more under the project's Node, which adds it;
 * nothing else changes.
 */
import { spawnSync } from 'node:child_process';

/** Whether the binary loads, asked of a fresh process (a failed require is remembered in this one). */
const loads = () => spawnSync(process.execPath, ['-e', "require('@nomicfoundation/edr')"], { stdio: 'ignore' }).status === 0;

if (process.env.VIXPAY_POSTINSTALL_AGAIN !== '1' && !loads() && process.env.npm_execpath) {
  console.log(`postinstall: npm ran on an older Node.js and skipped Hardhat's native EDR; installing again on Node ${process.version}`);
  const again = spawnSync(process.execPath, [process.env.npm_execpath, 'install', '--no-audit', '--no-fund'], {
    stdio: 'inherit', env: { ...process.env, VIXPAY_POSTINSTALL_AGAIN: '1' },
  });
  if (again.status !== 0 || !loads()) console.warn('postinstall: Hardhat\'s EDR is still missing; test/hardhat-node.test.ts will say so');
}
