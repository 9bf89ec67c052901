/** The operator's own HTTP endpoints: /healthz (alive), /readyz (informers synced), /metrics (Prometheus). */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/** A server answering the three operational paths; anything else is 404. */
export function createOpsServer(options: { ready: () => boolean; registry: Registry }): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'method not allowed\n');
    if (path === '/healthz') return reply(200, 'ok\n');
    if (path === '/readyz')
      return options.ready()
        ? reply(200, 'ready\n')
        : reply(503, 'not ready: custom resources not listed yet\n');
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => reply(200, text, options.registry.contentType),
        (err: Error) => reply(500, `${err.message}\n`),
      );
      return;
    }
    reply(404, 'not found\n');
  });
}
