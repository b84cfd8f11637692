import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP link between one instance and one of its parts (PostgreSQL, Redis, the chain node), as the
 * network between them: `pass` forwards every byte; `delay` holds each chunk `delayMs` (in order);
 * `cut` resets every open connection and every new one (a firewall's RST); `partition` keeps the
 * connections open and drops what they carry (a switch gone dark: the caller waits on its timeout).
 * Healing (`pass`) after a partition resets the connections it held, as a peer's keepalive would.
 */
export type LinkMode = { kind: 'pass' } | { kind: 'delay'; delayMs: number } | { kind: 'cut' } | { kind: 'partition' };

export interface TcpProxy {
  port: number;
  mode: LinkMode;
  set(mode: LinkMode): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const resetAll = () => {
    for (const { client, upstream } of pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  const server = net.createServer((client) => {
    client.on('error', () => undefined);
    if (proxy.mode.kind === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target);
    upstream.on('error', () => client.destroy());
    const pair = { client, upstream };
    pairs.add(pair);
    const pipe = (from: net.Socket, to: net.Socket) => {
      // Held chunks, in arrival order, each with the time it may go: one timer drains them in order.
      const held: { due: number; chunk: Buffer }[] = [];
      let timer: NodeJS.Timeout | undefined;
      const drain = () => {
        timer = undefined;
        while (held.length > 0 && held[0]!.due <= Date.now()) {
          const { chunk } = held.shift()!;
          if (!to.destroyed) to.write(chunk);
        }
        if (held.length > 0) timer = setTimeout(drain, held[0]!.due - Date.now());
      };
      from.on('data', (chunk: Buffer) => {
        const mode = proxy.mode;
        if (mode.kind === 'partition' || mode.kind === 'cut') return;
        if (mode.kind === 'pass' && held.length === 0) {
          to.write(chunk);
          return;
        }
        // Delayed, or passing again behind chunks still held: after them, in order.
        const lastDue = held.at(-1)?.due ?? 0;
        held.push({ due: Math.max(Date.now() + (mode.kind === 'delay' ? mode.delayMs : 0), lastDue), chunk });
        timer ??= setTimeout(drain, held[0]!.due - Date.now());
      });
      from.on('close', () => {
        pairs.delete(pair);
        setTimeout(() => to.destroy(), Math.max(0, (held.at(-1)?.due ?? 0) - Date.now()));
      });
    };
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: TcpProxy = {
    port: (server.address() as AddressInfo).port,
    mode: { kind: 'pass' },
    set(mode) {
      const before = proxy.mode.kind;
      proxy.mode = mode;
      if (mode.kind === 'cut' || (before === 'partition' && mode.kind !== 'partition')) resetAll();
    },
    close: () => new Promise((resolve) => {
      resetAll();
      server.close(() => resolve());
    }),
  };
  return proxy;
}
