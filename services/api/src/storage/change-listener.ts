/**
 * Listens to the change notifications of migrations 0300 and 0301 (LISTEN/NOTIFY) for credentials
 * and actions. On PostgreSQL a dedicated connection listens and reconnects when it drops; every
 * reconnect is reported, since notifications sent meanwhile are lost and caches must start over.
 * PGlite delivers its own notifications in process.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';

/** Evidence changes are not notified (migration 0302): see change-feed.ts. */
export type ChangeChannel = 'verity_auth' | 'verity_config';

export interface ChangeHandlers {
  /** A change of `channel` committed; `payload` as the trigger sent it. */
  onChange(channel: ChangeChannel, payload: string): void;
  /** Notifications may have been missed (the listener reconnected): forget everything cached. */
  onReset(): void;
  /** The connection failed, or could not be opened (it is retried). */
  onError?(err: Error): void;
}

export interface ChangeListener {
  /** True while changes are being received; caches must not be trusted otherwise. */
  readonly listening: boolean;
  close(): Promise<void>;
}

const CHANNELS: ChangeChannel[] = ['verity_auth', 'verity_config'];
const channelName = (channel: ChangeChannel, schema: string) => `${channel}__${schema}`;

/** Listens on the embedded database. */
export async function listenPglite(client: PGlite, handlers: ChangeHandlers): Promise<ChangeListener> {
  const schema = (await client.query<{ s: string }>('select current_schema() as s')).rows[0]?.s ?? 'public';
  const unsubscribe = await Promise.all(
    CHANNELS.map((channel) =>
      client.listen(channelName(channel, schema), (payload) => handlers.onChange(channel, payload)),
    ),
  );
  let closed = false;
  return {
    get listening() {
      return !closed && !client.closed;
    },
    async close() {
      if (closed) {
        return;
      }
      closed = true;
      // The database may already be closed (shutdown order, or lost): nothing left to unsubscribe.
      if (!client.closed) {
        await Promise.all(unsubscribe.map((u) => u().catch(() => undefined)));
      }
    },
  };
}

export interface PostgresListenOptions {
  connectionString: string;
  searchPath?: string | undefined;
  onError?: (err: Error) => void;
  /** Bound on opening the connection. */
  connectTimeoutMs?: number;
  /** Between heartbeats: a notification the listener sends itself. */
  heartbeatMs?: number;
  /**
   * Without a heartbeat heard for this long the listener is not listening (caches must not
   * trust it), and the connection is dropped and opened again.
   */
  staleAfterMs?: number;
}

/** Reconnection delays: from 250 ms doubling to 5 s, with jitter so replicas do not return in step. */
function reconnectDelay(attempt: number): number {
  const ms = Math.min(5_000, 250 * 2 ** Math.min(attempt, 5));
  return Math.round(ms * (0.5 + Math.random() / 2));
}

/** Gives up on a connection: its socket is destroyed ('end' follows, and a reconnect). */
function dropConnection(c: pg.Client): void {
  const stream = (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
  if (stream) {
    stream.destroy();
  } else {
    void c.end().catch(() => undefined);
  }
}

/** Ends a connection; a goodbye on a dead one is never answered, so it is dropped after `ms`. */
async function endWithin(c: pg.Client, ms: number): Promise<void> {
  const giveUp = setTimeout(() => dropConnection(c), ms);
  await c.end().catch(() => undefined);
  clearTimeout(giveUp);
}

/** The listener's own connection, kept alive by TCP so a dead peer is noticed. */
function listenerClient(options: PostgresListenOptions): pg.Client {
  return new pg.Client({
    connectionString: options.connectionString,
    application_name: 'verity-change-listener',
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
  });
}

/**
 * Listens on every change channel of the connection's schema and on the heartbeat channel; a
 * change goes to `onChange`, a heartbeat's send time to `onBeat`.
 */
async function listenOn(
  c: pg.Client,
  beatChannel: string,
  onChange: ChangeHandlers['onChange'],
  onBeat: (sentAt: number) => void,
): Promise<void> {
  const schema = (await c.query<{ s: string }>('select current_schema() as s')).rows[0]?.s ?? 'public';
  const names = new Map(CHANNELS.map((ch) => [channelName(ch, schema), ch]));
  c.on('notification', (msg) => {
    if (msg.channel === beatChannel) {
      onBeat(Number(msg.payload));
      return;
    }
    const channel = names.get(msg.channel);
    if (channel) {
      onChange(channel, msg.payload ?? '');
    }
  });
  for (const name of [...names.keys(), beatChannel]) {
    await c.query(`listen "${name.replace(/"/g, '""')}"`);
  }
}

/**
 * Listens on PostgreSQL with its own connection, reconnecting with backoff. A connection can die
 * without closing (a server host gone, a NAT or firewall dropping an idle flow): TCP keepalive
 * notices it eventually, and a heartbeat soon. The listener sends itself a notification every
 * `heartbeatMs` on a channel of its own; notifications arrive in commit order, so hearing one
 * proves every change committed before it was heard too. Without one for `staleAfterMs` the
 * listener reports it is not listening and starts over on a new connection.
 */
// Over the function limit: one connection's life (connect, listen, heartbeat, reconnect, close) as
// closures over its shared state; its steps are named functions above.
// eslint-disable-next-line max-lines-per-function -- a state machine over shared closure state
export function listenPostgres(options: PostgresListenOptions, handlers: ChangeHandlers): ChangeListener {
  const heartbeatMs = options.heartbeatMs ?? 1_000;
  const staleAfterMs = options.staleAfterMs ?? 5_000;
  const beatChannel = `verity_heartbeat_${randomBytes(8).toString('hex')}`;
  let client: pg.Client | undefined;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let beat: NodeJS.Timeout | undefined;
  /** When the last heartbeat heard was sent. */
  let heardSentAt = -Infinity;
  const onError = (err: Error) => {
    options.onError?.(err);
    handlers.onError?.(err);
  };

  const fresh = () => Date.now() - heardSentAt <= staleAfterMs;

  const heartbeat = (c: pg.Client) => {
    if (closed || client !== c) {
      return;
    }
    if (!fresh()) {
      onError(new Error(`No heartbeat heard on the change listener for ${staleAfterMs} ms`));
      dropConnection(c);
      return;
    }
    // A failed send is the connection's failure: 'error' and 'end' follow.
    c.query('select pg_notify($1, $2)', [beatChannel, String(Date.now())]).catch(() => undefined);
    beat = setTimeout(() => heartbeat(c), heartbeatMs);
    beat.unref();
  };

  const connect = async () => {
    if (closed) {
      return;
    }
    const c = listenerClient(options);
    c.on('error', (err) => onError(err));
    c.on('end', () => {
      if (client === c) {
        client = undefined;
        clearTimeout(beat);
      }
      if (!closed) {
        schedule();
      }
    });
    try {
      await c.connect();
      await listenOn(
        c,
        beatChannel,
        (channel, payload) => handlers.onChange(channel, payload),
        (sentAt) => (heardSentAt = Math.max(heardSentAt, sentAt)),
      );
      if (closed) {
        await c.end();
        return;
      }
      client = c;
      attempt = 0;
      // Listening from now on: what was sent before is covered by the reset below.
      heardSentAt = Date.now();
      // Anything cached before this connection listened may be stale.
      handlers.onReset();
      heartbeat(c);
    } catch (err) {
      onError(err as Error);
      dropConnection(c);
      schedule();
    }
  };
  const schedule = () => {
    if (closed || timer) {
      return;
    }
    handlers.onReset();
    attempt += 1;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, reconnectDelay(attempt));
    timer.unref();
  };
  void connect();
  return {
    get listening() {
      return client !== undefined && !closed && fresh();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      clearTimeout(beat);
      if (client) {
        await endWithin(client, 1_000);
      }
    },
  };
}
