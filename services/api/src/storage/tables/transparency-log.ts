/** Table types of the transparency log (migration 0400). */
import type { ColumnType, Generated } from 'kysely';

type Json<T> = ColumnType<T, T | string, T | string>;
type Bigint = ColumnType<string | number, number | string, number | string>;

export interface LogQueueTable {
  id: Generated<string>;
  org_id: string;
  kind: string;
  /** insert, update or delete */
  op: string;
  row: Json<Record<string, unknown>>;
}

export interface LogHeadsTable {
  org_id: string;
  size: Bigint;
  root: Uint8Array | null;
  checkpoint: string | null;
  updated_at: Date;
}

export interface LogEntriesTable {
  org_id: string;
  index: Bigint;
  kind: string;
  record_id: string;
  record: Json<Record<string, unknown>>;
  /** The entry's RFC 9162 leaf hash (migration 0430). */
  leaf: Uint8Array;
}

/** Subtree hashes of stored levels above the leaves (migration 0430). */
export interface LogNodesTable {
  org_id: string;
  level: number;
  idx: Bigint;
  hash: Uint8Array;
}

export interface LogKeysTable {
  org_id: string;
  key_id: string;
  public_key: Uint8Array;
  /** PKCS#8 DER of the Ed25519 private key; never returned or logged. */
  private_key: Uint8Array | null;
  created_at: Date;
  retired_at: Date | null;
}

export interface LogTriggerStateTable {
  id: number;
  fingerprint: string;
}

export interface TransparencyLogTables {
  log_queue: LogQueueTable;
  log_heads: LogHeadsTable;
  log_entries: LogEntriesTable;
  log_nodes: LogNodesTable;
  log_keys: LogKeysTable;
  log_trigger_state: LogTriggerStateTable;
}
