import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const domains = ['wallet', 'payments', 'pairing', 'rewards', 'identity', 'did', 'ipfs', 'pay', 'webhooks', 'receipts', 'console', 'fleet'];

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'src/gen/'] },
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
  layer('src/{shared,config}/**/*.ts', [...domains, 'chain', 'store', 'transports', 'cli'], 'shared and config stand on nothing of ours'),
  layer('src/chain/**/*.ts', [...domains, 'store', 'transports', 'cli'], 'chain keeps its records through the ChainJournal port the store implements'),
  layer('src/store/**/*.ts', [...domains, 'transports', 'cli'], 'the store implements ports: no domain logic, no transport'),
  layer(`src/{${domains.join(',')}}/**/*.ts`, ['transports', 'cli'], 'domain code never imports transports or the CLI'),
  // Transports receive the composed platform (its type) and the CLI composes one; neither is imported back.
  layer('src/transports/**/*.ts', ['cli'], 'transports never import the CLI', { root: false }),
  layer('src/cli/**/*.ts', [], 'the CLI', { root: false }),
);

/** What the files of one part may not import: the folders named, the composition root, test support. */
function layer(files, folders, why, { root = true } = {}) {
  const patterns = [
    ...folders.map((folder) => ({ group: [`**/${folder}/**`], message: `must not import src/${folder}: ${why}` })),
    ...(root ? [{ group: ['**/compose.ts', '**/main.ts'], message: `only main.ts, the CLI and the transports' types use the composition: ${why}` }] : []),
    { group: ['**/test/**'], message: 'production code never imports test support' },
  ];
  return { files: [files], ignores: ['**/*.test.ts'], rules: { 'no-restricted-imports': ['error', { patterns }] } };
}
