import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/config.ts';
import { keysRotateCommand } from '../src/cli/key-commands.ts';
import { createJwtService } from '../src/identity/jwt.ts';
import { createSigningKeyRepository } from '../src/store/signing-key-repository.ts';
import { openSigningKeys } from '../src/identity/signing-key-store.ts';
import { signingKeyFileName } from '../src/identity/signing-keys.ts';
import { createKeyVault } from '../src/shared/key-vault.ts';
import { createLogger } from '../src/shared/logger.ts';
import { openStore } from '../src/store/db.ts';
import { cliDeps } from '../src/main.ts';

// item 6 of issue 19, through the command itself: `JWT_TTL_SECONDS=60 npx vixpay keys rotate`
// against an instance issuing 1-hour tokens made them 401 after 125 s. The instance runs on a clock
// the test moves; the command runs on the real one, as it would.
test('vixpay keys rotate with JWT_TTL_SECONDS=60 leaves a serving instance\'s 1-hour tokens valid for their hour', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-rotate-window-'));
  const masterKey = randomBytes(32);
  const store = await openStore({ dataDir });
  try {
    const offset = { ms: 0 };
    const clock = () => Date.now() + offset.ms;
    const keys = await openSigningKeys({
      repository: createSigningKeyRepository(store.db), vault: createKeyVault(masterKey), clock, ttlSeconds: 3600,
      importFile: path.join(dataDir, signingKeyFileName),
    });
    keys.close();
    const jwt = createJwtService({ keys, clock, ttlSeconds: 3600 });
    const outstanding = (await jwt.issueAccessToken('alice')).token;

    const config = loadConfig({
      DATA_DIR: dataDir, MASTER_KEY: masterKey.toString('hex'), RELAYER_PRIVATE_KEY: `0x${randomBytes(32).toString('hex')}`, JWT_TTL_SECONDS: '60',
    });
    const rotation = await keysRotateCommand.run({ config, logger: createLogger('silent'), deps: cliDeps, values: {}, positionals: [] }) as { kid: string; retired: string[] };
    assert.equal(rotation.retired.length, 1);

    offset.ms = 10 * 60_000; // ten minutes on: far past the command's 60 s + 65 s
    await jwt.reloadKeys();
    assert.equal(keys.current().active.kid, rotation.kid, 'the instance signs with the new key');
    assert.equal((await jwt.verifyAccessToken(outstanding)).userId, 'alice', 'a token issued before the rotation still verifies');
    assert.ok(jwt.jwks().keys.some((key) => key.kid === rotation.retired[0]), 'and its key is still published');
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
