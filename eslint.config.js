import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The domains and which others each may use: the arrows of docs/architecture.md, one way only.
 * A domain not named on the right of an entry cannot be imported by it.
 */
const domainUses = {
  pairing: [],
  identity: [],
  did: [],
  ipfs: [],
  fleet: [],
  wallet: [],
  commerce: ['wallet'],
  webhooks: ['pairing'],
  payments: ['commerce', 'pairing', 'wallet', 'webhooks'],
  rewards: ['commerce', 'pairing', 'wallet', 'webhooks'],
  receipts: ['commerce', 'did'],
  pay: ['identity', 'wallet'],
  console: ['identity'],
  statements: ['commerce', 'console', 'webhooks'],
  x402: ['wallet', 'webhooks', 'receipts'],
};
const domains = Object.keys(domainUses);

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'src/gen/', 'test/support/gen/', '.stryker-tmp/', 'reports/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error', 'warn', 'log'] }],
    },
  },
  // The layering (docs/architecture.md). Each block says what a part may not import; tests are free.
  layer('src/{shared,config}/**/*.ts', [...domains, 'chain', 'store', 'transports', 'cli', 'compose'], 'shared and config stand on nothing of ours'),
  layer('src/chain/**/*.ts', [...domains, 'store', 'transports', 'cli', 'compose'], 'chain keeps its records through the ChainJournal port the store implements'),
  // The store implements the domains' ports over their records: it imports their types, nothing else of them.
  layer('src/store/**/*.ts', ['transports', 'cli', 'compose'], 'the store implements ports: no transport', { typesOf: domains }),
  ...domains.map((domain) => layer(`src/${domain}/**/*.ts`,
    [...domains.filter((other) => other !== domain && !domainUses[domain].includes(other)), 'transports', 'cli', 'compose'],
    `${domain} uses ${domainUses[domain].length > 0 ? domainUses[domain].join(', ') : 'no other domain'} (eslint.config.js); never a transport, the CLI or the composition root`)),
  // The composition root builds services from the domains; only src/main.ts puts them behind transports.
  layer('src/compose/**/*.ts', ['transports', 'cli'], 'the root builds services; src/main.ts joins them to the transports'),
  layer('src/transports/**/*.ts', ['cli', 'compose'], 'transports receive narrow dependencies (HttpDeps, GrpcDeps), never the root'),
  layer('src/cli/**/*.ts', ['compose', 'store'], 'the CLI receives CliDeps from src/main.ts, never the root or a repository'),
);

/** What the files of one part may not import (values and types; `typesOf`: types allowed), and never src/main.ts or test support. */
function layer(files, folders, why, { typesOf = [] } = {}) {
  const patterns = [
    ...folders.map((folder) => ({ group: [`**/${folder}/**`], message: `must not import src/${folder}: ${why}` })),
    ...typesOf.map((folder) => ({ group: [`**/${folder}/**`], message: `only types of src/${folder}: ${why}`, allowTypeImports: true })),
    { group: ['**/main.ts', '!**/cli/main.ts'], message: `only bin/vixpay.js starts src/main.ts: ${why}` },
    { group: ['**/test/**'], message: 'production code never imports test support' },
    { group: ['./shared/*', '../shared/*', '../../shared/*', '../../../shared/*'], message: 'import shared code as #shared/… (package.json "imports")' },
  ];
  return {
    files: [files], ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': 'off', '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
  };
}
