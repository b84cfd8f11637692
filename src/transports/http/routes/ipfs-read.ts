import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseContentId } from '../../../ipfs/content-id.ts';
import { directoryTar } from '../../../ipfs/directory-tar.ts';
import { normalizeEntryPath } from '../../../ipfs/entry-path.ts';
import type { IpfsBackend, IpfsObjectStat } from '../../../ipfs/ipfs-backend.ts';
import type { IpfsLimits } from '../../../ipfs/ipfs-limits.ts';
import { errorBody } from '../errors.ts';

export interface ReadRouteDeps {
  backend: IpfsBackend;
  limits: IpfsLimits;
}

/** Path and query of the read routes, as the OpenAPI document shows them; `target` reads them. */
export const readParams = z.object({ cid: z.string().describe('CIDv0 (Qm…) or CIDv1') });
export const catQuery = z.object({ path: z.string().optional().describe('A path inside a directory: dir/file.txt') });
export const getQuery = catQuery.extend({ filename: z.string().optional().describe('Name of the downloaded file (or tar archive)') });
export const getHeaders = z.object({ range: z.string().optional().describe('One bytes range (RFC 9110): bytes=6-10, bytes=6-, bytes=-5') });

interface ReadRequest {
  Params: { cid: string };
  Querystring: { path?: string; filename?: string };
}

interface Target {
  cid: string;
  path: string | undefined;
  stat: IpfsObjectStat;
}

/** The object named by `:cid` and `?path=`, checked and looked up (404 when not on the node). */
async function target(deps: ReadRouteDeps, request: FastifyRequest<ReadRequest>): Promise<Target> {
  const cid = parseContentId(request.params.cid);
  const rawPath = typeof request.query.path === 'string' ? request.query.path : '';
  const path = normalizeEntryPath(rawPath.replace(/^\/+/, ''), deps.limits, 'path') || undefined;
  return { cid, path, stat: await deps.backend.stat(cid, path) };
}

/**
 * GET /v1/ipfs/:cid[?path=dir/file.txt]: a file's data as text (`text/plain; charset=utf-8`,
 * bytes as stored), or a directory's entries as JSON `{cid, entries: [{name, cid, type, size}]}`.
 */
export function catRoute(deps: ReadRouteDeps) {
  return async (request: FastifyRequest<ReadRequest>, reply: FastifyReply) => {
    const { cid, path, stat } = await target(deps, request);
    if (stat.type === 'directory') {
      const entries = [];
      for await (const entry of deps.backend.ls(cid, path)) entries.push(entry);
      return reply.send({ cid: stat.cid, entries });
    }
    return reply
      .type('text/plain; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .header('content-length', stat.size)
      .send(Readable.from(deps.backend.cat(cid, path)));
  };
}

/**
 * GET /v1/ipfs/:cid/get[?path=…][&filename=…]: a file's bytes as an attachment, with HTTP Range
 * (one range; 206 or 416); a directory as a tar archive (`<name>.tar`, no ranges).
 */
export function getRoute(deps: ReadRouteDeps) {
  return async (request: FastifyRequest<ReadRequest>, reply: FastifyReply) => {
    const { cid, path, stat } = await target(deps, request);
    const requested = typeof request.query.filename === 'string' ? request.query.filename : '';
    if (stat.type === 'directory') {
      const name = safeFilename(requested) ?? cid;
      reply.type('application/x-tar').header('content-disposition', attachment(name.endsWith('.tar') ? name : `${name}.tar`));
      return reply.send(Readable.from(directoryTar(deps.backend, stat.cid, name.replace(/\.tar$/, '') || cid)));
    }
    reply.type('application/octet-stream').header('content-disposition', attachment(safeFilename(requested) ?? cid)).header('accept-ranges', 'bytes');
    const range = parseRange(request.headers.range, stat.size);
    if (range === 'unsatisfiable') {
      return reply.status(416).header('content-range', `bytes */${stat.size}`).type('application/json; charset=utf-8').send(errorBody('request.range_not_satisfiable', `range ${request.headers.range} is outside the ${stat.size} bytes of the file`));
    }
    if (!range) return reply.header('content-length', stat.size).send(Readable.from(deps.backend.cat(cid, path)));
    const length = range.end - range.start + 1;
    return reply
      .status(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${stat.size}`)
      .header('content-length', length)
      .send(Readable.from(deps.backend.cat(cid, path, { offset: range.start, length })));
  };
}

/**
 * One `bytes=` range of RFC 9110 (`a-b`, `a-`, `-n`); undefined (send everything) when there is
 * no Range header or it is not a single bytes range; 'unsatisfiable' when it misses the file.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = header ? /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/.exec(header) : null;
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/**
 * A file name safe for Content-Disposition: no path, no control characters, quotes or
 * backslashes, at most 200 characters; undefined when nothing usable is left.
 */
export function safeFilename(requested: string): string | undefined {
  const base = requested.split(/[/\\]/).at(-1) ?? '';
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f\u007f"]/g, '').replace(/^[\s.]+|[\s.]+$/g, '').slice(0, 200);
  return cleaned === '' ? undefined : cleaned;
}

function attachment(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return ascii === filename ? `attachment; filename="${filename}"` : `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
