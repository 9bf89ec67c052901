/**
 * A recording receiver standing in for the Verity API's environment endpoints until they land:
 * it checks the Bearer key, validates every K8S report with the K8sReport schema (400 with field
 * errors, as the API does), answers GET/PUT of environments for auto-creation, answers the
 * statuses a test queues (400/409/429/5xx, with Retry-After), and records everything it got.
 * It can stop and start again on the same port to play an outage.
 */
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { K8sReport } from '../../services/shared/contract/environment-reports.js';

export interface Received {
  method: string;
  path: string;
  /** The environment of a report or environment request. */
  environment?: string;
  /** What the receiver answered. */
  status: number;
  body: any;
  authorization: string | undefined;
  /** performance.now() when the request had fully arrived, before it was validated or answered. */
  at: number;
}

interface Queued {
  status: number;
  retryAfter?: number;
  message?: string;
}

export class RecordingReceiver extends EventEmitter<{ request: [Received] }> {
  readonly received: Received[] = [];
  /** Environments that exist, by name -> type. */
  readonly environments = new Map<string, string>();
  private readonly queue: Queued[] = [];
  private server: Server | undefined;
  private port = 0;
  url = '';

  constructor(
    readonly org: string,
    /** The accepted API key; tests may change it to play a rotation. */
    public key: string,
  ) {
    super();
    this.setMaxListeners(0);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  /** Closes the port: requests fail to connect until {@link start} is called again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) {
      return;
    }
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The next report requests answer these statuses, in order. */
  respondNext(...answers: Array<number | Queued>): void {
    this.queue.push(...answers.map((a) => (typeof a === 'number' ? { status: a } : a)));
  }

  /** Accepted K8S reports (optionally of one environment). */
  reports(environment?: string): Array<{ environment: string; body: K8sReport }> {
    return this.received
      .filter((r) => r.path.endsWith('/report/K8S') && r.status === 200)
      .filter((r) => environment === undefined || r.environment === environment)
      .map((r) => ({ environment: r.environment!, body: r.body as K8sReport }));
  }

  /** Report requests, whatever the answer. */
  reportRequests(environment?: string): Received[] {
    return this.received.filter(
      (r) => r.path.endsWith('/report/K8S') && (environment === undefined || r.environment === environment),
    );
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = text;
      }
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const answer = (
        status: number,
        payload: unknown,
        environment?: string,
        headers: Record<string, string> = {},
      ) => {
        const r: Received = {
          method: req.method ?? '',
          path,
          environment,
          status,
          body,
          authorization: req.headers.authorization,
          at,
        };
        this.received.push(r);
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
        this.emit('request', r);
      };
      this.route(req.method ?? '', path, body, req.headers.authorization, answer);
    });
  }

  private route(
    method: string,
    path: string,
    body: unknown,
    authorization: string | undefined,
    answer: (
      status: number,
      payload: unknown,
      environment?: string,
      headers?: Record<string, string>,
    ) => void,
  ): void {
    const prefix = `/api/v2/environments/${this.org}`;
    const report = new RegExp(`^${prefix}/([^/]+)/report/K8S$`).exec(path);
    const one = new RegExp(`^${prefix}/([^/]+)$`).exec(path);
    const env = decodeURIComponent((report ?? one)?.[1] ?? '') || undefined;
    if (authorization !== `Bearer ${this.key}`) {
      return answer(401, { message: 'Authentication failed: invalid API key' }, env);
    }

    if (method === 'PUT' && report) {
      const queued = this.queue.shift();
      if (queued) {
        const headers: Record<string, string> =
          queued.retryAfter !== undefined ? { 'retry-after': String(queued.retryAfter) } : {};
        return answer(
          queued.status,
          { message: queued.message ?? `queued answer ${queued.status}` },
          env,
          headers,
        );
      }
      const parsed = K8sReport.safeParse(body);
      if (!parsed.success) {
        const errors = Object.fromEntries(
          parsed.error.issues.map((i) => [`body.${i.path.join('.')}`, i.message]),
        );
        return answer(400, { message: 'Input payload validation failed', errors }, env);
      }
      if (!this.environments.has(env!)) {
        return answer(
          404,
          { message: `Environment named '${env}' does not exist for organization '${this.org}'` },
          env,
        );
      }
      return answer(200, 'OK', env);
    }
    if (method === 'GET' && one) {
      const type = this.environments.get(env!);
      if (!type) {
        return answer(404, { message: `Environment named '${env}' does not exist` }, env);
      }
      return answer(200, { name: env, type, description: '', org: this.org, tags: {}, policies: null }, env);
    }
    if (method === 'PUT' && path === prefix) {
      const b = body as { name?: string; type?: string; description?: string };
      if (typeof b?.name !== 'string' || typeof b.type !== 'string' || typeof b.description !== 'string') {
        return answer(400, { message: 'Input payload validation failed' });
      }
      this.environments.set(b.name, b.type);
      return answer(201, 'OK', b.name);
    }
    answer(404, { message: 'not found' });
  }
}
