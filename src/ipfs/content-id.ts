import { CID } from 'multiformats/cid';
import { DomainError } from '#shared/errors.ts';

const dagPbCode = 0x70;
const rawCode = 0x55;

/**
 * Parses a CID as a caller writes it (CIDv0 `Qm…`, or CIDv1 in base32 `b…`, base58btc `z…` or
 * base36 `k…`) and returns its canonical string (v0 as base58btc, v1 as base32). Only UnixFS
 * codecs (dag-pb, raw) are accepted: anything else is `request.invalid`, as is a malformed CID.
 */
export function parseContentId(text: string): string {
  let cid: CID;
  try {
    cid = CID.parse(text);
  } catch (cause) {
    throw new DomainError('request.invalid', `not a valid CID: ${JSON.stringify(text.slice(0, 100))}`, { cause });
  }
  if (cid.code !== dagPbCode && cid.code !== rawCode) {
    throw new DomainError('request.invalid', `CID ${text} is not UnixFS content (codec 0x${cid.code.toString(16)})`);
  }
  return cid.toString();
}
