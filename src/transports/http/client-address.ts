import type { TrustProxy } from '../../config/config.ts';

/**
 * Fastify's `trustProxy` for `TRUST_PROXY` (config.ts `parseTrustProxy`). `request.ip` is then the
 * client address that the failed-login throttle (`auth-user`, REST pay) and the website-login
 * binding (`auth-user-by-app` … `auth-user-result-by-app`) key on:
 * - `false`: the socket's peer; X-Forwarded-For is ignored;
 * - a hop count N: X-Forwarded-For is read from the right, past the N trusted proxies: entries a
 *   client wrote itself (to the left) are never taken. The server must then be reachable only
 *   through those proxies (otherwise a direct caller is counted as one);
 * - addresses/CIDRs: entries are read from the right only while the peer is one of them, so a
 *   direct caller's header is ignored.
 * Never `true` (the leftmost entry, which the client writes); config refuses it.
 */
export function trustProxyOption(trust: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false;
  // Fastify's own reading of a number (`hop < n`), typed as the function its types accept.
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return [...trust];
}
