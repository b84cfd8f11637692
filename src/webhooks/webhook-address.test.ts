import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import ipaddr from 'ipaddr.js';
import { checkedAddresses, isPublicAddress, PrivateAddressError } from './webhook-address.ts';

// Every special range ipaddr.js knows, of both families, read from the library itself: a range
// it adds later is in this table without an edit here.
type Ranges<T> = Record<string, [T, number] | Array<[T, number]>>;
const specialRanges = <T>(prototype: object) => (prototype as { SpecialRanges: Ranges<T> }).SpecialRanges;
const subnets = <T>(entry: [T, number] | Array<[T, number]>): Array<[T, number]> => (Array.isArray(entry[0]) ? (entry as Array<[T, number]>) : [entry as [T, number]]);
const ipv4Ranges = specialRanges<ipaddr.IPv4>(ipaddr.IPv4.prototype);
const ipv6Ranges = specialRanges<ipaddr.IPv6>(ipaddr.IPv6.prototype);

/** The first and the last address of each subnet of each range. */
function edges<T extends ipaddr.IPv4 | ipaddr.IPv6>(ranges: Ranges<T>, family: typeof ipaddr.IPv4 | typeof ipaddr.IPv6) {
  return Object.entries(ranges).flatMap(([name, entry]) =>
    subnets(entry).flatMap(([network, bits]) => {
      const cidr = `${network.toString()}/${bits}`;
      return [family.networkAddressFromCIDR(cidr), family.broadcastAddressFromCIDR(cidr)].map((address) => ({ name, cidr, address: address.toString() }));
    }),
  );
}

/** Every IPv6 form that carries `ipv4` (a dotted quad): compatible, mapped, RFC 6145, NAT64, 6to4, Teredo. */
function carriers(ipv4: string): Array<{ form: string; address: string }> {
  const [a, b, c, d] = ipaddr.IPv4.parse(ipv4).octets as [number, number, number, number];
  const high = ((a << 8) | b).toString(16);
  const low = ((c << 8) | d).toString(16);
  const inverted = (value: number) => (value ^ 0xffff).toString(16);
  return [
    { form: '::/96 (IPv4-compatible)', address: `::${high}:${low}` },
    { form: '::ffff:0:0/96 (mapped)', address: `::ffff:${high}:${low}` },
    { form: '::ffff:0:0:0/96 (RFC 6145)', address: `::ffff:0:${high}:${low}` },
    { form: '64:ff9b::/96 (NAT64)', address: `64:ff9b::${high}:${low}` },
    { form: '2002::/16 (6to4)', address: `2002:${high}:${low}::1` },
    // Teredo: the server is a public relay (here 65.54.227.120), the client is the address inverted.
    { form: '2001::/32 (Teredo)', address: `2001:0:4136:e378:8000:63bf:${inverted((a << 8) | b)}:${inverted((c << 8) | d)}` },
  ];
}

const publicIPv4 = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '151.101.1.69'];
const publicIPv6 = ['2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888'];

describe('webhook addresses', () => {
  test('every special IPv4 range is refused, at its first and last address', () => {
    const accepted = edges(ipv4Ranges, ipaddr.IPv4).filter(({ address }) => isPublicAddress(address));
    assert.deepEqual(accepted, []);
  });

  test('every special IPv6 range is refused, at its first and last address', () => {
    const accepted = edges(ipv6Ranges, ipaddr.IPv6).filter(({ address }) => isPublicAddress(address));
    assert.deepEqual(accepted, []);
  });

  test('an IPv6 address carrying an IPv4 one is judged by it: every special IPv4 range refused in every carrying form', () => {
    const accepted = edges(ipv4Ranges, ipaddr.IPv4)
      .flatMap(({ name, cidr, address }) => carriers(address).map((carrier) => ({ name, cidr, ipv4: address, ...carrier })))
      .filter(({ address }) => isPublicAddress(address));
    assert.deepEqual(accepted, []);
  });

  test('a public IPv4 address is accepted, as it is and in every carrying form; public IPv6 too', () => {
    const refused = [...publicIPv4, ...publicIPv4.flatMap((ipv4) => carriers(ipv4).map(({ address }) => address)), ...publicIPv6].filter((address) => !isPublicAddress(address));
    assert.deepEqual(refused, []);
  });

  test('Teredo is refused when its server is not public, whatever the client', () => {
    // Server 10.0.0.1, client 8.8.8.8 (inverted: f7f7:f7f7).
    assert.equal(isPublicAddress('2001:0:a00:1::f7f7:f7f7'), false);
  });

  test('the issue\'s URLs are refused without --allow-private (item 4 of issue 28)', async () => {
    const lookup = () => Promise.reject(new Error('an address literal is not resolved'));
    for (const url of ['https://[::127.0.0.1]:443/hook', 'https://[::a9fe:a9fe]/hook', 'https://[::ffff:169.254.169.254]/hook', 'https://[64:ff9b::10.0.0.1]/hook', 'https://[2002:c0a8:101::1]/hook']) {
      await assert.rejects(checkedAddresses(new URL(url).hostname, lookup), PrivateAddressError, url);
    }
    const resolvesTo = (address: string) => () => Promise.resolve([{ address, family: 6 }]);
    await assert.rejects(checkedAddresses('hooks.example.com', resolvesTo('64:ff9b::a9fe:a9fe')), /resolves to 64:ff9b::a9fe:a9fe/);
    assert.deepEqual(await checkedAddresses('hooks.example.com', resolvesTo('64:ff9b::808:808')), [{ address: '64:ff9b::808:808', family: 6 }]);
  });
});
