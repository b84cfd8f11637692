// One large file through POST /v1/ipfs/add to the API in its own process: throughput and the
// server's memory (RSS peak, and live heap + buffers after GC). BENCH_IPFS_MIB sets the size.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { deterministicStream } from '../test/support/deterministic-bytes.ts';
import { auth, boundary } from '../test/support/ipfs-http.ts';

export async function benchIpfsUpload(mib = Number(process.env.BENCH_IPFS_MIB ?? 1024)): Promise<object> {
  const size = mib * 1024 * 1024;
  const server = fork(new URL('../test/support/ipfs-streaming-server.ts', import.meta.url), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--expose-gc'],
  });
  try {
    const [{ port }] = (await once(server, 'message')) as [{ port: number }];
    server.send('start');
    const started = performance.now();
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/ipfs/add',
        headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` } });
      request.on('error', reject);
      request.on('response', (response) => { response.resume(); response.on('end', () => resolve(response.statusCode ?? 0)); });
      (async () => {
        const write = (chunk: Uint8Array | string) => new Promise<void>((done) => (request.write(chunk) ? done() : request.once('drain', done)));
        await write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\n\r\n`);
        for await (const chunk of deterministicStream(size, 'bench', 256 * 1024)) await write(chunk);
        await write(`\r\n--${boundary}--\r\n`);
        request.end();
      })().catch(reject);
    });
    const seconds = (performance.now() - started) / 1000;
    server.send('memory');
    const [memory] = (await once(server, 'message')) as [{ baseline: number; peak: number; liveBaseline: number; livePeak: number }];
    const toMiB = (bytes: number) => Number((bytes / 2 ** 20).toFixed(1));
    return {
      uploadMiB: mib, status, seconds: Number(seconds.toFixed(1)), mibPerSecond: Number((mib / seconds).toFixed(1)),
      serverRssGrowthMiB: toMiB(memory.peak - memory.baseline), serverLiveGrowthMiB: toMiB(memory.livePeak - memory.liveBaseline),
    };
  } finally {
    server.send('stop');
    await once(server, 'exit');
  }
}
