/**
 * `npm start`: one process, every interface, on the embedded default unless configured otherwise
 * (docs/architecture.md). The services and every backend come from `composePlatform` (./compose/platform.ts); here they
 * are put behind their transports:
 * - HTTP (Fastify, `buildHttpApp`): /token, /block, /v1/chain (JSON-RPC), /v2/auth, /v2/did,
 *   /v1/ict/pay, /v1/ipfs, /demo;
 * - gRPC (`startGrpcServer`): g00.payments.v2.PaymentsService.
 */
import type { Config } from './config/config.ts';
import { loadConfigOrExit } from './config/load-config-or-exit.ts';
import { consoleLogDestination, createLogger, type Logger } from '#shared/logger.ts';
import { describeFailure } from '#shared/failure-summary.ts';
import { withinMs } from '#shared/within-ms.ts';
import { forgetServerUrls, recordServerUrls } from '#shared/server-urls.ts';
import { readyBanner, readyUrls } from './transports/ready-banner.ts';
import { withOutcomeLog } from './compose/outcome-log.ts';
import { composePlatform, type PaymentPart, type Platform } from './compose/platform.ts';
import { rotateFleetSigningKeys, withAttachedPlatform, withStoreRecords } from './compose/operator-tools.ts';
import { migrateKeysToToken } from './compose/key-migration.ts';
import { runCli } from './cli/main.ts';
import type { CliDeps } from './cli/cli-deps.ts';
import { buildHttpApp } from './transports/http/app.ts';
import { startGrpcServer, type GrpcServer } from './transports/grpc/grpc-server.ts';
import { grpcMetricsInterceptor } from './transports/grpc/grpc-metrics.ts';
import { grpcListenerProbe } from './transports/grpc/grpc-listener-probe.ts';

/**
 * The gRPC payment server over the platform's payment and reward services (or another instance's
 * `part`): apps authenticated by the identity's JWTs, POS terminals by store API keys. Its calls are
 * counted in the platform's metrics; `/readyz` checks that it answers health SERVING on its port.
 */
export async function startPaymentServer(
  platform: Pick<Platform, 'config' | 'logger' | 'clock' | 'identity' | 'metrics' | 'readiness'>,
  part: Pick<PaymentPart, 'payments' | 'rewards'>,
  options: { host?: string; port?: number } = {},
): Promise<GrpcServer> {
  const { config, identity } = platform;
  const logged = withOutcomeLog(part, platform.logger);
  const server = await startGrpcServer({
    payments: logged.payments,
    rewards: logged.rewards,
    verifyAccessToken: (token) => identity.jwt.verifyAccessToken(token),
    findUserWallet: async (userId) => {
      const user = await identity.users.findUser(userId);
      return user?.walletAddress ? { address: user.walletAddress } : undefined;
    },
    clock: platform.clock,
    timeZone: config.timeZone,
    logger: platform.logger.child({ component: 'grpc' }),
  }, {
    host: options.host ?? config.grpcHost, port: options.port ?? config.grpcPort, maxMessageBytes: config.grpcMaxMessageBytes,
    interceptors: [grpcMetricsInterceptor(platform.metrics)],
    limits: {
      firstMessageTimeoutMs: config.grpcFirstMessageTimeoutMs, maxStreamsPerClient: config.grpcMaxStreamsPerClient,
      maxConcurrentStreamsPerConnection: config.grpcMaxConcurrentStreamsPerConnection, keepaliveTimeMs: config.grpcKeepaliveTimeMs,
      keepaliveTimeoutMs: config.grpcKeepaliveTimeoutMs, maxConnectionIdleMs: config.grpcMaxConnectionIdleMs,
    },
  });
  const listener = grpcListenerProbe({ host: options.host ?? config.grpcHost, port: server.port });
  platform.readiness.add('grpc', listener.probe);
  // Once stopped, the probe answers down (its client closed): an instance shutting down is not ready.
  return { ...server, stop: (graceMs) => server.stop(graceMs).finally(() => listener.close()) };
}

/** The exit code of a shutdown whose deadline (SHUTDOWN_TIMEOUT_SECONDS) passed with steps unfinished; a clean stop is 0. */
export const shutdownDeadlineExitCode = 3;
/** Of the shutdown deadline, kept back from the platform's steps for logging and exiting. */
const shutdownExitReserveMs = 500;

/**
 * Starts the platform and its servers; stops gracefully on SIGINT/SIGTERM within
 * SHUTDOWN_TIMEOUT_SECONDS: listeners first, then open calls, then the platform, the chains last.
 */
export async function serve(config: Config, logger: Logger): Promise<void> {
  const platform = await composePlatform(config, logger);
  let http: Awaited<ReturnType<typeof buildHttpApp>> | undefined;
  let grpc: GrpcServer;
  try {
    http = await buildHttpApp(platform);
    await http.listen({ port: config.httpPort, host: config.httpHost }).catch((error: unknown) => {
      throw new Error(`HTTP server cannot listen on ${config.httpHost}:${config.httpPort} (HTTP_HOST, HTTP_PORT): ${describeFailure(error)}`, { cause: error });
    });
    grpc = await startPaymentServer(platform, platform).catch((error: unknown) => {
      throw new Error(`gRPC server cannot listen on ${config.grpcHost}:${config.grpcPort} (GRPC_HOST, GRPC_PORT): ${describeFailure(error)}`, { cause: error });
    });
  } catch (error) {
    // e.g. a port in use: leave nothing running behind (the anvils we own, the other port).
    await http?.close().catch(() => undefined);
    await platform.stop();
    throw error;
  }

  const address = http.server.address();
  const bound = { httpPort: typeof address === 'object' && address ? address.port : config.httpPort, grpcPort: grpc.port };
  if (process.stdout.isTTY) process.stdout.write(`\n${readyBanner(config, bound)}\n\n`);
  else logger.info({ urls: Object.fromEntries(readyUrls(config, bound)) }, 'ready');
  // Commands run beside this server find it here (src/shared/server-urls.ts).
  recordServerUrls(config.dataDir, { httpHost: config.httpHost, httpPort: bound.httpPort, grpcHost: config.grpcHost, grpcPort: bound.grpcPort },
    (err) => logger.warn({ err }, 'could not record the server URLs in DATA_DIR'));

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const timeoutMs = config.shutdownTimeoutMs;
    const started = Date.now();
    logger.info({ signal, timeoutMs }, 'shutting down');
    // The last resort: whatever still hangs, the process is gone by the deadline.
    setTimeout(() => {
      logger.error({ signal, timeoutMs }, 'shutdown deadline passed; exiting with steps unfinished');
      process.exit(shutdownDeadlineExitCode);
    }, timeoutMs).unref();
    // Both listeners stop accepting at once (the gRPC health turns NOT_SERVING, /readyz not ready);
    // open calls get half the time to finish, then each payment stream still open is answered 10.
    const graceMs = Math.floor(timeoutMs / 2);
    await Promise.all([
      withinMs(http.close(), graceMs, 'HTTP close').catch((err: unknown) => logger.error({ err }, 'http close failed')),
      grpc.stop(graceMs).catch((err: unknown) => logger.error({ err }, 'gRPC stop failed')),
    ]);
    // The rest, each step bounded, the chains last; a little kept back for the exit itself.
    await platform.stop({ timeoutMs: timeoutMs - (Date.now() - started) - shutdownExitReserveMs });
    forgetServerUrls(config.dataDir);
    logger.info({ ms: Date.now() - started }, 'stopped');
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

/** What the CLI's commands run on, from the composition root. */
export const cliDeps: CliDeps = { withPlatform: withAttachedPlatform, withStoreRecords, rotateSigningKeys: rotateFleetSigningKeys, migrateKeys: migrateKeysToToken, serve };

/** The CLI (`npx vixpay`, bin/vixpay.js). */
export function runCommandLine(argv: string[]): Promise<void> {
  return runCli(argv, cliDeps);
}

if (import.meta.main) {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel, consoleLogDestination(process.stdout));
  await serve(config, logger).catch((err: unknown) => {
    // One line naming what failed (a port, a URL, a file); the stack only at debug.
    logger.debug({ err }, 'failed to start');
    logger.fatal({ error: describeFailure(err) }, 'failed to start');
    process.exit(1);
  });
}
