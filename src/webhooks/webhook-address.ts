import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may connect (docs/webhooks.md "Addresses"): public unicast addresses only, unless
 * the operator opted the endpoint in (`webhook add --allow-private`). Refused: loopback, private
 * (RFC 1918), link-local (169.254/16: cloud metadata), CGNAT (100.64/10), unique-local (fc00::/7),
 * unspecified, multicast, reserved and documentation ranges: every range ipaddr.js does not call
 * `unicast`. An IPv6 address that carries an IPv4 one (IPv4-compatible `::/96`, mapped, NAT64,
 * 6to4, Teredo) is judged by the IPv4 address it carries. Names that only ever mean a private host
 * (localhost, *.internal, *.local, *.home.arpa) are refused by name.
 */

/** The resolver: `dns.lookup` (what a connection uses), or a test's. */
export type HostLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookup: HostLookup = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

const privateNames = ['localhost', 'internal', 'local', 'home.arpa'];

/** The IPv4 address in 32 bits. */
const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/**
 * The IPv4 addresses an IPv6 address carries, or undefined when it carries none: a packet to
 * `::7f00:1` or `64:ff9b::a9fe:a9fe` reaches 127.0.0.1 or 169.254.169.254 through a translator,
 * tunnel or dual stack, so the address is only as public as what it carries.
 * - `::/96` (IPv4-compatible, RFC 4291), `::ffff:0:0/96` (mapped), `::ffff:0:0:0/96` (RFC 6145),
 *   `64:ff9b::/96` (NAT64, RFC 6052): the last 32 bits;
 * - `2002::/16` (6to4, RFC 3056): bits 16–47;
 * - `2001::/32` (Teredo, RFC 4380): the server (bits 32–63) and the client (the last 32 bits,
 *   inverted); both must be public.
 */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = address.parts;
  const zeros = (from: number, to: number) => p.slice(from, to).every((part) => part === 0);
  if (zeros(0, 6)) return [ipv4Of(p[6]!, p[7]!)];
  if (zeros(0, 5) && p[5] === 0xffff) return [ipv4Of(p[6]!, p[7]!)];
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return [ipv4Of(p[6]!, p[7]!)];
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return [ipv4Of(p[6]!, p[7]!)];
  if (p[0] === 0x2002) return [ipv4Of(p[1]!, p[2]!)];
  if (p[0] === 0x2001 && p[1] === 0) return [ipv4Of(p[2]!, p[3]!), ipv4Of(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
  return undefined;
}

/** True for an address of the public internet. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const ipv6 = parsed as ipaddr.IPv6;
  // `::` and `::1` are themselves what they are, not 0.0.0.0 and 0.0.0.1.
  if (ipv6.range() === 'unspecified' || ipv6.range() === 'loopback') return false;
  const carried = embeddedIPv4(ipv6);
  if (carried) return carried.every((ipv4) => ipv4.range() === 'unicast');
  return ipv6.range() === 'unicast';
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
