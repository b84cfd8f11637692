import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { privateFileMode } from './private-data-dir.ts';

/**
 * Where a started server says it listens: `DATA_DIR/server.json`, written when it is ready and
 * removed at a clean stop. Commands run beside it (`npx vixpay demo pay`, `pos`, `app`) read it, so
 * they find the server on whatever port it was given without being told again.
 */
export const serverUrlsFileName = 'server.json';

export interface ServerUrls {
  /** Base URL of the HTTP APIs, e.g. `http://127.0.0.1:8080`. */
  http: string;
  /** `host:port` of the payment server (gRPC). */
  grpc: string;
  /** The server's process id: a stop removes only its own record. */
  pid: number;
}

export interface ListeningOn {
  httpHost: string;
  httpPort: number;
  grpcHost: string;
  grpcPort: number;
}

/** A bind address as a client on this machine dials it: `0.0.0.0` and `::` mean loopback. */
function dialable(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export function serverUrlsOf(listening: ListeningOn, pid = process.pid): ServerUrls {
  return {
    http: `http://${dialable(listening.httpHost)}:${listening.httpPort}`,
    grpc: `${dialable(listening.grpcHost)}:${listening.grpcPort}`,
    pid,
  };
}

/**
 * Records the URLs atomically (a reader never sees half a file), replacing an earlier server's record.
 * Never throws: a record that cannot be written (a full disk) is reported to `onError` and the server
 * runs on; commands then need --http/--grpc.
 */
export function recordServerUrls(dataDir: string, listening: ListeningOn, onError: (error: unknown) => void): void {
  const file = path.join(dataDir, serverUrlsFileName);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(serverUrlsOf(listening), null, 2)}\n`, { mode: privateFileMode });
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    onError(error);
  }
}

/** The recorded URLs, or undefined when there are none (no server started here, or it stopped cleanly). */
export function readServerUrls(dataDir: string): ServerUrls | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path.join(dataDir, serverUrlsFileName), 'utf8'));
  } catch {
    return undefined;
  }
  const record = parsed as Partial<ServerUrls> | null;
  if (typeof record?.http !== 'string' || typeof record.grpc !== 'string') return undefined;
  return { http: record.http, grpc: record.grpc, pid: Number(record.pid) };
}

/** At a clean stop: removes the record if it is still this process's (another server may have replaced it). */
export function forgetServerUrls(dataDir: string, pid = process.pid): void {
  if (readServerUrls(dataDir)?.pid !== pid) return;
  try {
    rmSync(path.join(dataDir, serverUrlsFileName), { force: true });
  } catch {
    // Left behind, it is replaced at the next start.
  }
}
