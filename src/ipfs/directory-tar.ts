import { pack as tarPack, type Header, type Pack } from 'tar-stream';
import { DomainError } from '#shared/errors.ts';
import type { IpfsBackend } from './ipfs-backend.ts';

/** ustar's size field holds less than 8 GiB; larger files get their size in a PAX record. */
const ustarMaxSize = 8 * 1024 ** 3;
const epoch = new Date(0);

type EntryHeader = Partial<Header> & Pick<Header, 'name'>;
type EntrySink = ReturnType<Pack['entry']>;

/**
 * A directory as a tar stream (tar-stream: POSIX ustar, with PAX headers for paths over ustar's
 * limits and files of 8 GiB or more), like `ipfs get` writes: the top directory is named
 * `rootName` and holds the tree, files with mode 0644, directories 0755, mtime 0 (UnixFS keeps
 * none by default). Streams file by file; memory stays bounded whatever the directory's size.
 */
export async function* directoryTar(backend: Pick<IpfsBackend, 'ls' | 'cat'>, cid: string, rootName: string): AsyncGenerator<Uint8Array> {
  const archive = tarPack();
  const writing = (async () => {
    await directory(archive, backend, cid, rootName);
    archive.finalize();
  })();
  // A failed read fails the archive (and so the download) rather than ending it short.
  writing.catch((error: unknown) => archive.destroy(error as Error));
  try {
    for await (const chunk of archive) yield chunk as Uint8Array;
    await writing;
  } finally {
    // The reader stopped early (client gone): stop walking the directory too.
    if (!archive.destroyed) archive.destroy();
  }
}

async function directory(archive: Pack, backend: Pick<IpfsBackend, 'ls' | 'cat'>, cid: string, path: string): Promise<void> {
  await entry(archive, { name: `${path}/`, type: 'directory', mode: 0o755, mtime: epoch });
  for await (const child of backend.ls(cid)) {
    const childPath = `${path}/${child.name}`;
    if (child.type === 'directory') {
      await directory(archive, backend, child.cid, childPath);
      continue;
    }
    const header: EntryHeader = { name: childPath, type: 'file', mode: 0o644, mtime: epoch, size: child.size };
    if (child.size >= ustarMaxSize) header.pax = { size: String(child.size) };
    let written = 0;
    await entry(archive, header, async (sink) => {
      for await (const chunk of backend.cat(child.cid)) {
        written += chunk.byteLength;
        if (written > child.size) throw sizeMismatch(child.cid, `more than ${child.size}`, child.size);
        if (!sink.write(chunk)) await drained(sink);
      }
      if (written !== child.size) throw sizeMismatch(child.cid, String(written), child.size);
    });
  }
}

function sizeMismatch(cid: string, written: string, size: number): DomainError {
  return new DomainError('internal', `${cid} is ${written} bytes, its directory says ${size}`);
}

/** Waits until the entry takes more data; throws if the archive was closed meanwhile. */
async function drained(sink: EntrySink): Promise<void> {
  await new Promise<void>((resolve) => {
    const settle = () => {
      sink.off('drain', settle);
      sink.off('close', settle);
      resolve();
    };
    sink.on('drain', settle);
    sink.on('close', settle);
  });
  if (sink.destroyed) throw new DomainError('internal', 'the tar archive was closed before it was complete');
}

/** Writes one entry; `content` writes a file's bytes into it, with backpressure. */
async function entry(archive: Pack, header: EntryHeader, content?: (sink: EntrySink) => Promise<void>): Promise<void> {
  let done!: (error?: Error | null) => void;
  const finished = new Promise<void>((resolve, reject) => (done = (error) => (error ? reject(error) : resolve())));
  finished.catch(() => undefined); // awaited below; a failed content reports its own error first
  const sink = archive.entry(header, (error) => done(error));
  sink.on('error', () => undefined); // reported through `finished` and the archive

  if (content) {
    try {
      await content(sink);
    } catch (error) {
      sink.destroy(error as Error);
      throw error;
    }
  }
  sink.end(undefined);
  await finished;
}
