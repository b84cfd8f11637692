import { isIP } from 'node:net';
import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';

/**
 * The network a request's Host selects by its first label (docs/interfaces.md#json-rpc-apis):
 * `api-op.example.com` → optimism. An IP address has no label and selects ethereum, the
 * default; an unknown label is an error, never a silent default.
 */
export function networkFromHost(host: string | undefined, labels: Readonly<Record<string, NetworkName>>): NetworkName {
  const hostname = (host ?? '').trim().toLowerCase().replace(/^\[(.*)\](:\d+)?$/, '$1').replace(/:\d+$/, '');
  if (hostname === '' || isIP(hostname)) return 'ethereum';
  const label = hostname.split('.')[0] ?? '';
  const network = Object.hasOwn(labels, label) ? labels[label] : undefined;
  if (!network) {
    throw new DomainError('network.unknown', `host label "${label.slice(0, 63)}" selects no network (known: ${Object.keys(labels).join(', ')})`);
  }
  return network;
}
