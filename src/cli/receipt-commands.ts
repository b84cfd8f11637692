import { readFileSync } from 'node:fs';
import { DomainError } from '#shared/errors.ts';
import { isNetworkName } from '#shared/networks.ts';
import { createEthrResolver } from '../did/did-agent.ts';
import { verifyReceipt, type VerifyReceiptDeps } from '../receipts/verify-receipt.ts';
import type { CliCommand } from './command.ts';
import { withPlatform } from './command.ts';

/** The receipt in FILE (`-`: standard input): its JSON (W3C form with proof.jwt) or its JWT. */
function readReceipt(file: string): unknown {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8').trim();
  if (!text.startsWith('{')) return text;
  try {
    const parsed = JSON.parse(text) as { receipts?: unknown[] };
    // A whole answer of GET /v1/receipts/...: its first receipt.
    return Array.isArray(parsed.receipts) ? parsed.receipts[0] : parsed;
  } catch {
    throw new DomainError('request.invalid', `${file}: neither JSON nor a JWT`);
  }
}

export const receiptVerifyCommand: CliCommand = {
  summary: 'FILE|-  verify a receipt: signature on our chain\'s DID registry, system issuer, the stated transfer on chain',
  options: {},
  run: async (context) => {
    const [file] = context.positionals;
    if (!file) throw new DomainError('request.invalid', 'FILE is required (- for standard input)');
    const document = readReceipt(file);
    const result = await withPlatform(context, async (platform) => {
      const { ethereum } = platform.chains;
      // ethr-did-resolver on our chain's registry: nothing of the platform's own agent.
      const resolver = createEthrResolver({
        chainId: ethereum.chainId, rpcUrl: ethereum.url, registry: platform.contracts.ethereum.didRegistry, callTimeoutMs: platform.config.chainCallTimeoutMs,
      }) as unknown as VerifyReceiptDeps['resolver'];
      return verifyReceipt({
        resolver,
        systemIssuers: platform.did.systemDids.issuer.map((entry) => entry.did),
        chainOf: (network) => (isNetworkName(network) ? platform.chains[network] : undefined),
      }, document);
    });
    if (!result.verified) {
      const failed = result.checks.find((check) => !check.ok);
      throw new DomainError('request.invalid', `receipt not verified: ${failed?.check ?? 'signature'}: ${failed?.detail ?? ''}`);
    }
    return result;
  },
};
