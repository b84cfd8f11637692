import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError } from '#shared/errors.ts';
import { addContent } from '../../../ipfs/add-content.ts';
import { defaultAddOptions, type AddOptions, type IpfsBackend } from '../../../ipfs/ipfs-backend.ts';
import type { IpfsLimits } from '../../../ipfs/ipfs-limits.ts';
import { partsToEntries } from './ipfs-add-parts.ts';
import { multipartBoundary, readMultipart, tooLarge } from './ipfs-multipart.ts';

/** Kubo `add` options we honour, each with the only values that keep our CID profile. */
const fixedOptions: Readonly<Record<string, readonly string[]>> = {
  chunker: ['size-262144'],
  hash: ['sha2-256'],
  trickle: ['false', '0'],
  nocopy: ['false', '0'],
  inline: ['false', '0'],
};
/** Kubo output options: accepted, meaningless here (the answer is always `{cid}`). */
const ignoredOptions = new Set(['progress', 'quiet', 'quieter', 'silent', 'stream-channels', 'recursive', 'hidden', 'q', 'Q', 'r']);

const booleanOption = z.enum(['true', 'false', '1', '0', '']).optional();

/**
 * The query of POST /v1/ipfs/add as the OpenAPI document shows it, built from the same tables
 * parseAddQuery checks against (Kubo's names; parseAddQuery words each refusal for its option).
 */
export const addQuery = z.object({
  'cid-version': z.enum(['0', '1']).optional().describe('CID version: 0 (default, as Kubo) or 1'),
  'raw-leaves': booleanOption.describe('Raw leaves (default: false for CIDv0, true for CIDv1)'),
  'wrap-with-directory': booleanOption.describe('Wrap the files in a directory'),
  w: booleanOption.describe('Same as wrap-with-directory'),
  'only-hash': booleanOption.describe('Compute the CID without storing anything'),
  n: booleanOption.describe('Same as only-hash'),
  pin: booleanOption.describe('Pin the content (default true)'),
  ...Object.fromEntries(Object.entries(fixedOptions).map(([key, values]) => [
    key, z.enum(values as [string, ...string[]]).optional().describe('Accepted only with the value that keeps Kubo\'s default CIDs'),
  ])),
  ...Object.fromEntries([...ignoredOptions].map((key) => [key, z.string().optional().describe('Kubo output option: accepted, ignored')])),
}).strict();

/** The multipart body of POST /v1/ipfs/add, as curl -F sends it (docs/ipfs-api.md). */
export const addBody = {
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        properties: {
          file: {
            type: 'array',
            items: { type: 'string', format: 'binary' },
            description: 'One part per file, its filename the file\'s path in the added directory (`dir/a.txt`); a part of type application/x-directory names a directory',
          },
        },
      },
    },
  },
};

/**
 * Query options of POST /v1/ipfs/add, named as Kubo's: `cid-version` (0|1), `raw-leaves`,
 * `wrap-with-directory`, `only-hash`, `pin` (booleans `true`/`false`/`1`/`0`). Kubo options that
 * would change the CID profile are refused unless set to their default; unknown ones are refused.
 */
export function parseAddQuery(query: Record<string, unknown>): AddOptions {
  const overrides: Partial<AddOptions> = {};
  for (const [key, raw] of Object.entries(query)) {
    const value = Array.isArray(raw) ? raw.at(-1) : raw;
    if (typeof value !== 'string') throw invalidOption(key, 'must be given once as text');
    switch (key) {
      case 'cid-version':
        if (value !== '0' && value !== '1') throw invalidOption(key, 'must be 0 or 1');
        overrides.cidVersion = value === '1' ? 1 : 0;
        break;
      case 'raw-leaves':
        overrides.rawLeaves = parseBoolean(key, value);
        break;
      case 'wrap-with-directory':
      case 'w':
        overrides.wrapWithDirectory = parseBoolean(key, value);
        break;
      case 'only-hash':
      case 'n':
        overrides.onlyHash = parseBoolean(key, value);
        break;
      case 'pin':
        overrides.pin = parseBoolean(key, value);
        break;
      default:
        if (ignoredOptions.has(key)) break;
        if (key === 'nocopy' && value !== 'false' && value !== '0') {
          throw invalidOption(key, 'is not supported: the filestore is disabled, send the data in the request');
        }
        if (!fixedOptions[key]) throw invalidOption(key, 'is not a supported option (cid-version, raw-leaves, wrap-with-directory, only-hash, pin)');
        if (!fixedOptions[key].includes(value)) throw invalidOption(key, `only ${fixedOptions[key].join(' or ')} is supported, to keep Kubo's default CIDs`);
    }
  }
  return defaultAddOptions(overrides);
}

export interface AddRouteDeps {
  backend: IpfsBackend;
  limits: IpfsLimits;
}

/** POST /v1/ipfs/add: streams the multipart parts into the backend, answers `{cid}`. */
export function addRoute(deps: AddRouteDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    let cid: string;
    let options: AddOptions;
    try {
      options = parseAddQuery(request.query as Record<string, unknown>);
      const boundary = multipartBoundary(request.headers['content-type']);
      const declared = Number(request.headers['content-length'] ?? 0);
      if (declared > deps.limits.maxTotalBytes) throw tooLarge(`request body is larger than ${deps.limits.maxTotalBytes} bytes`);
      const parts = readMultipart(request.raw, boundary, deps.limits);
      ({ cid } = await addContent(deps.backend, { entries: partsToEntries(parts, deps.limits.maxFieldBytes), options, limits: deps.limits }));
    } catch (error) {
      // Refused before the upload was all read: answer now and close, rather than read (and drop) the rest.
      if (!request.raw.complete) reply.header('connection', 'close');
      throw error;
    }
    request.log.info({ cid, onlyHash: options.onlyHash }, 'ipfs add');
    return reply.send({ cid });
  };
}

function parseBoolean(key: string, value: string): boolean {
  if (value === 'true' || value === '1' || value === '') return true;
  if (value === 'false' || value === '0') return false;
  throw invalidOption(key, 'must be true or false');
}

function invalidOption(key: string, reason: string): DomainError {
  return new DomainError('request.invalid', `query option ${key} ${reason}`);
}
