#!/usr/bin/env node
// The operator CLI. Runs on the Node 24 that `npm install` puts in node_modules/.bin (use `npx vixpay`).
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  console.error(`vixpay needs Node.js 24 (found ${process.version}); run it as \`npx vixpay\` inside the project.`);
  process.exit(1);
}
// Each command loads the platform's modules: Node's on-disk compile cache (its temporary folder, or
// NODE_COMPILE_CACHE) spares a third of that work from the second run on (NODE_DISABLE_COMPILE_CACHE=1 turns it off).
const { enableCompileCache } = await import('node:module');
enableCompileCache();
const { runCommandLine } = await import('../src/main.ts');
await runCommandLine(process.argv.slice(2));
