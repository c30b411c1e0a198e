// Serves a file:// warehouse over a local HTTP server with range requests (what icebird and
// other fetch-based readers need) and maps fetches of file://<root>/... URIs onto it, so the
// absolute file:// paths inside Floe's metadata work unchanged. Loopback only.
import { createServer } from 'node:http';
import { openSync, readSync, statSync, closeSync } from 'node:fs';
import { join, resolve } from 'node:path';

// Starts the server for the directory `warehouse` and replaces globalThis.fetch with one that
// sends file://<root>/... to it and everything else to `underlying`. Returns { base, root,
// close }: base is the server's http:// URL of root.
export async function serveWarehouse(warehouse, underlying = globalThis.fetch) {
  const root = resolve(warehouse);
  const server = createServer((req, res) => {
    const path = join(root, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!path.startsWith(root)) { res.writeHead(403).end(); return; }
    let size;
    try { size = statSync(path).size; } catch { res.writeHead(404).end(); return; }
    let start = 0, end = size - 1, status = 200;
    const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (m) {
      if (m[1] === '') start = Math.max(0, size - Number(m[2]));
      else { start = Number(m[1]); if (m[2] !== '') end = Math.min(end, Number(m[2])); }
      status = 206;
    }
    const len = Math.max(0, end - start + 1);
    const buf = Buffer.alloc(len);
    const fd = openSync(path, 'r');
    readSync(fd, buf, 0, len, start);
    closeSync(fd);
    const headers = { 'content-length': String(len), 'accept-ranges': 'bytes' };
    if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${size}`;
    res.writeHead(status, headers);
    res.end(req.method === 'HEAD' ? undefined : buf);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  globalThis.fetch = (url, init) => {
    let u = typeof url === 'string' ? url : url.url ?? String(url);
    if (u.startsWith(`file://${root}/`)) u = base + u.slice(`file://${root}`.length);
    return underlying(u, init);
  };
  return { base, root, close: () => server.close() };
}
