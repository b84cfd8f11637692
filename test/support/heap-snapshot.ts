/**
 * The text of every string a process keeps, from a V8 heap snapshot of it (node:v8 writeHeapSnapshot,
 * which collects garbage first). A snapshot writes a flat string's text, but a string built by
 * concatenation (`a + b`, `hex += ...`: how viem's bytesToHex makes a key's hex) only as a
 * "(concatenated string)" node pointing at its two halves: searching the file alone would miss it, so
 * those are put together here. What a snapshot does not hold: the contents of ArrayBuffers (Buffers,
 * Uint8Arrays): a key kept as bytes is not found by this, only a key kept as text.
 */
import { readFileSync } from 'node:fs';

interface SnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Longest put-together string kept (a key inside a longer one is still found up to here). */
const maxLength = 1 << 20;

export function heapSnapshotStrings(file: string): string[] {
  const { snapshot: { meta }, nodes, edges, strings } = JSON.parse(readFileSync(file, 'utf8')) as SnapshotFile;
  const nodeFields = meta.node_fields.length;
  const edgeFields = meta.edge_fields.length;
  const [typeField, nameField, edgeCountField] = ['type', 'name', 'edge_count'].map((field) => meta.node_fields.indexOf(field)) as [number, number, number];
  const [edgeTypeField, edgeNameField, edgeToField] = ['type', 'name_or_index', 'to_node'].map((field) => meta.edge_fields.indexOf(field)) as [number, number, number];
  const cons = meta.node_types[0].indexOf('concatenated string');
  const sliced = meta.node_types[0].indexOf('sliced string');
  const internal = meta.edge_types[0].indexOf('internal');
  const count = nodes.length / nodeFields;

  const firstEdge = new Uint32Array(count);
  for (let node = 0, edge = 0; node < count; node++) {
    firstEdge[node] = edge;
    edge += nodes[node * nodeFields + edgeCountField]! * edgeFields;
  }
  /** A cons string's halves (node indexes), by its internal edges "first" and "second". */
  const halves = (node: number): [number, number] | undefined => {
    let first: number | undefined;
    let second: number | undefined;
    const end = firstEdge[node]! + nodes[node * nodeFields + edgeCountField]! * edgeFields;
    for (let edge = firstEdge[node]!; edge < end; edge += edgeFields) {
      if (edges[edge + edgeTypeField] !== internal) continue;
      const name = strings[edges[edge + edgeNameField]!];
      const to = edges[edge + edgeToField]! / nodeFields;
      if (name === 'first') first = to;
      else if (name === 'second') second = to;
    }
    return first === undefined || second === undefined ? undefined : [first, second];
  };

  /**
   * The text of a cons string that is no other's half (the halves' text is inside it), leaves in order,
   * without recursion (ropes can be deep) and without the intermediate strings (their sum can be huge).
   */
  const textOf = (root: number): string => {
    const out: string[] = [];
    let length = 0;
    const stack: number[] = [root];
    while (stack.length > 0 && length < maxLength) {
      const node = stack.pop()!;
      const type = nodes[node * nodeFields + typeField];
      const parts = type === cons ? halves(node) : undefined;
      if (parts) {
        stack.push(parts[1], parts[0]);
      } else if (type !== sliced) {
        // A flat string: its text is its name. A sliced one's text is in its parent's, searched as such.
        const leaf = strings[nodes[node * nodeFields + nameField]!]!;
        out.push(leaf);
        length += leaf.length;
      }
    }
    return out.join('');
  };

  const isHalf = new Uint8Array(count);
  for (let node = 0; node < count; node++) {
    if (nodes[node * nodeFields + typeField] !== cons) continue;
    for (const half of halves(node) ?? []) isHalf[half] = 1;
  }
  const texts = [...strings];
  for (let node = 0; node < count; node++) {
    if (nodes[node * nodeFields + typeField] === cons && !isHalf[node]) texts.push(textOf(node));
  }
  return texts;
}
