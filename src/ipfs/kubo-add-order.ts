import { DomainError } from '#shared/errors.ts';
import { parentPaths } from './entry-path.ts';
import type { AddEntry } from './ipfs-backend.ts';

/**
 * Kubo walks the parts of an add as a depth-first tree and silently drops a part that comes back
 * into a directory it already left, so such an order is refused (`request.invalid`) instead.
 * The returned check throws when an entry re-enters a directory that earlier entries left.
 */
export function depthFirstCheck(): (entry: AddEntry) => void {
  const open: string[] = [];
  const closed = new Set<string>();
  return (entry) => {
    const containers = parentPaths(entry.path);
    if (entry.kind === 'directory') containers.push(entry.path);
    while (open.length > 0 && !containers.includes(open.at(-1) as string)) closed.add(open.pop() as string);
    for (const dir of containers) {
      if (closed.has(dir)) {
        throw new DomainError('request.invalid', `part ${JSON.stringify(entry.path)} comes back into ${JSON.stringify(dir)} after other parts; this IPFS node needs parts in depth-first order`);
      }
      if (!open.includes(dir)) open.push(dir);
    }
  };
}
