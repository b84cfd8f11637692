import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may connect (docs/webhooks.md "Addresses"): public unicast addresses only, unless
 * the operator opted the endpoint in (`webhook add --allow-private`). Refused: loopback, private
 * (RFC 1918), link-local (169.254/16: cloud metadata), CGNAT (100.64/10), unique-local (fc00::/7),
 * unspecified, multicast, reserved and documentation ranges, and IPv6 forms that embed an IPv4
 * address (mapped, NAT64, 6to4, Teredo): every range ipaddr.js does not call `unicast`. Names that
 * only ever mean a private host (localhost, *.internal, *.local, *.home.arpa) are refused by name.
 */

/** The resolver: `dns.lookup` (what a connection uses), or a test's. */
export type HostLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: HostLookup = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

const privateNames = ['localhost', 'internal', 'local', 'home.arpa'];

/** True for an address of the public internet. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // ::ffff:10.0.0.1 is 10.0.0.1.
  return ipaddr.process(address).range() === 'unicast';
}

/** The URL's host without IPv6 brackets or a trailing dot, lower case. */
export const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();

/** Why `hostname` (a name, not an address) is refused without resolving it, or undefined. */
function privateName(hostname: string): string | undefined {
  const host = bareHost(hostname);
  const suffix = privateNames.find((name) => host === name || host.endsWith(`.${name}`));
  return suffix && `${host} is a private host name (.${suffix})`;
}

export class PrivateAddressError extends Error {
  override name = 'PrivateAddressError';
  readonly code = 'EWEBHOOKPRIVATE';
}

/**
 * The addresses `hostname` resolves to, every one checked; throws PrivateAddressError naming the
 * first that is not public. An address literal is checked as it is.
 */
export async function checkedAddresses(hostname: string, lookup: HostLookup): Promise<Array<{ address: string; family: number }>> {
  const host = bareHost(hostname);
  if (isIP(host)) {
    if (!isPublicAddress(host)) throw new PrivateAddressError(`${host} is not a public address`);
    return [{ address: host, family: isIP(host) }];
  }
  const named = privateName(host);
  if (named) throw new PrivateAddressError(named);
  const addresses = await lookup(host);
  const refused = addresses.find((entry) => !isPublicAddress(entry.address));
  if (refused) throw new PrivateAddressError(`${host} resolves to ${refused.address}, not a public address`);
  if (addresses.length === 0) throw new PrivateAddressError(`${host} resolves to no address`);
  return addresses;
}

/**
 * A `lookup` for node:net that resolves, checks every address, and hands the connection only the
 * checked ones: the connection goes to an address that was checked, never to one resolved again
 * after the check (DNS rebinding).
 */
export function guardedLookup(lookup: HostLookup): LookupFunction {
  return (hostname, options, callback) => {
    checkedAddresses(hostname, lookup).then((addresses) => {
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      if (wanted.length === 0) {
        callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '', 0);
      } else if (options.all) {
        callback(null, wanted);
      } else {
        callback(null, wanted[0]!.address, wanted[0]!.family);
      }
    }, (error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}
