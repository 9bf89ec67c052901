/**
 * A small TCP proxy between the API and PostgreSQL, standing in for the Kubernetes Service in
 * front of a database operator's primary: it can be pointed at another server (a failover), and
 * it can stop forwarding without closing anything (a NAT or firewall dropping packets), holding
 * what arrives meanwhile until it forwards again, as TCP retransmission would deliver it.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

interface Link {
  client: Socket;
  upstream: Socket | undefined;
  /** Chunks held while paused (or before the upstream connection exists), in arrival order. */
  held: Array<{ toUpstream: boolean; chunk: Buffer }>;
}

export class TcpProxy {
  private server: Server | undefined;
  private readonly links = new Set<Link>();
  private paused = false;
  port = 0;

  constructor(private targetPort: number) {}

  /** Starts listening on a free port of 127.0.0.1; returns it. */
  async listen(): Promise<number> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this.port;
  }

  /** New connections go to `port` from now on; existing ones are cut (their server is gone). */
  retarget(port: number): void {
    this.targetPort = port;
    for (const link of this.links) {
      this.cut(link);
    }
  }

  /** Stops forwarding, silently: nothing is closed, nothing answers. */
  pause(): void {
    this.paused = true;
  }

  /** Forwards again, first what was held. */
  resume(): void {
    this.paused = false;
    for (const link of this.links) {
      this.flush(link);
    }
  }

  async close(): Promise<void> {
    for (const link of this.links) {
      this.cut(link);
    }
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: Socket): void {
    const link: Link = { client, upstream: undefined, held: [] };
    this.links.add(link);
    client.on('error', () => this.cut(link));
    client.on('close', () => this.cut(link));
    client.on('data', (chunk: Buffer) => this.send(link, true, chunk));
    if (!this.paused) {
      this.open(link);
    }
  }

  private open(link: Link): void {
    const upstream = connect(this.targetPort, '127.0.0.1');
    link.upstream = upstream;
    upstream.on('error', () => this.cut(link));
    upstream.on('close', () => this.cut(link));
    upstream.on('data', (chunk: Buffer) => this.send(link, false, chunk));
    upstream.on('connect', () => this.flush(link));
  }

  private send(link: Link, toUpstream: boolean, chunk: Buffer): void {
    const ready = link.upstream !== undefined && !link.upstream.connecting;
    if (this.paused || !ready || link.held.length > 0) {
      link.held.push({ toUpstream, chunk });
      return;
    }
    (toUpstream ? link.upstream! : link.client).write(chunk);
  }

  private flush(link: Link): void {
    if (this.paused) {
      return;
    }
    if (!link.upstream) {
      this.open(link);
      return;
    }
    if (link.upstream.connecting) {
      return;
    }
    for (const { toUpstream, chunk } of link.held.splice(0)) {
      (toUpstream ? link.upstream : link.client).write(chunk);
    }
  }

  private cut(link: Link): void {
    if (!this.links.delete(link)) {
      return;
    }
    link.client.destroy();
    link.upstream?.destroy();
  }
}
