/**
 * Listens to the change notifications of migrations 0300 and 0301 (LISTEN/NOTIFY) for credentials
 * and actions. On PostgreSQL a dedicated connection listens and reconnects when it drops; every
 * reconnect is reported, since notifications sent meanwhile are lost and caches must start over.
 * PGlite delivers its own notifications in process.
 */
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';

/** Evidence changes are not notified (migration 0302): see change-feed.ts. */
export type ChangeChannel = 'verity_auth' | 'verity_config';

export interface ChangeHandlers {
  /** A change of `channel` committed; `payload` as the trigger sent it. */
  onChange(channel: ChangeChannel, payload: string): void;
  /** Notifications may have been missed (the listener reconnected): forget everything cached. */
  onReset(): void;
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
      if (closed) return;
      closed = true;
      // The database may already be closed (shutdown order, or lost): nothing left to unsubscribe.
      if (!client.closed) await Promise.all(unsubscribe.map((u) => u().catch(() => undefined)));
    },
  };
}

/** Listens on PostgreSQL with its own connection, reconnecting with backoff. */
export function listenPostgres(
  options: { connectionString: string; searchPath?: string | undefined; onError?: (err: Error) => void },
  handlers: ChangeHandlers,
): ChangeListener {
  let client: pg.Client | undefined;
  let closed = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;

  const connect = async () => {
    if (closed) return;
    const c = new pg.Client({
      connectionString: options.connectionString,
      application_name: 'verity-change-listener',
      ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
    });
    c.on('error', (err) => options.onError?.(err));
    c.on('end', () => {
      if (client === c) client = undefined;
      if (!closed) schedule();
    });
    try {
      await c.connect();
      const schema = (await c.query<{ s: string }>('select current_schema() as s')).rows[0]?.s ?? 'public';
      const names = new Map(CHANNELS.map((ch) => [channelName(ch, schema), ch]));
      c.on('notification', (msg) => {
        const channel = names.get(msg.channel);
        if (channel) handlers.onChange(channel, msg.payload ?? '');
      });
      for (const name of names.keys()) await c.query(`listen "${name.replace(/"/g, '""')}"`);
      if (closed) {
        await c.end();
        return;
      }
      client = c;
      attempt = 0;
      // Anything cached before this connection listened may be stale.
      handlers.onReset();
    } catch (err) {
      options.onError?.(err as Error);
      await c.end().catch(() => undefined);
      schedule();
    }
  };
  const schedule = () => {
    if (closed || timer) return;
    handlers.onReset();
    attempt += 1;
    timer = setTimeout(
      () => {
        timer = undefined;
        void connect();
      },
      Math.min(30_000, 250 * 2 ** Math.min(attempt, 7)),
    );
    timer.unref();
  };
  void connect();
  return {
    get listening() {
      return client !== undefined && !closed;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
