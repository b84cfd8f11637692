import { pino, type Logger } from 'pino';

export type { Logger };

/** Keys whose values must never reach a log line, wherever they appear in a logged object. */
const secretPaths = [
  'secretKey', 'privateKey', 'mnemonic', 'password', 'hashKey', 'tempKey', 'signature', 'token',
  'authorization', 'apiKey', 'masterKey',
].flatMap((key) => [key, `*.${key}`, `*.*.${key}`, `req.headers.${key}`]);

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    { level, redact: { paths: secretPaths, censor: '[redacted]' }, base: { service: 'vixpay' } },
    destination as pino.DestinationStream | undefined,
  );
}
