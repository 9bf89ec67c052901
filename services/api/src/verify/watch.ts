/**
 * A witness: polls an organization's checkpoint, checks its signature with the key it pinned on
 * the first poll (or was given), and checks it is consistent with the last checkpoint it kept
 * (RFC 9162 consistency proof from the server); keeps the new one in its state file. A rewrite
 * of the log's history (entries changed or dropped) fails the check.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { consistencyOk, openCheckpoint, type Checkpoint } from './checks.js';

export class WitnessError extends Error {}

export interface WatchOptions {
  url: string;
  org: string;
  stateFile: string;
  apiKey: string | undefined;
  /** Verifier key to trust; without it the first poll pins the server's. */
  key: string | undefined;
}

interface State {
  origin: string;
  key: string;
  size: number;
  root: string;
  note: string;
}

async function get(o: WatchOptions, path: string): Promise<string> {
  const res = await fetch(`${o.url.replace(/\/+$/, '')}/api/v2/log/${encodeURIComponent(o.org)}/${path}`, {
    headers: o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {},
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) {
    throw new WitnessError(`GET ${path}: ${res.status} ${text.slice(0, 200)}`);
  }
  return text;
}

async function readState(file: string): Promise<State | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as State;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return undefined;
    }
    throw new WitnessError(`${file}: ${(err as Error).message}`);
  }
}

/** One poll; returns a line saying what was checked, or throws naming the inconsistency. */
export async function watchOnce(o: WatchOptions): Promise<string> {
  const state = await readState(o.stateFile);
  const key = o.key ?? state?.key ?? (await get(o, 'key')).split('\n')[0]!.trim();
  let cp: Checkpoint;
  try {
    cp = openCheckpoint(await get(o, 'checkpoint'), [key]);
  } catch (err) {
    throw new WitnessError(`checkpoint: ${(err as Error).message}`);
  }
  let said = `checkpoint of ${cp.origin} at size ${cp.size}: signature ok`;
  if (state) {
    const oldRoot = Buffer.from(state.root, 'base64');
    if (cp.origin !== state.origin) {
      throw new WitnessError(`the checkpoint's origin is ${cp.origin}, the one kept is ${state.origin}`);
    }
    if (cp.size < state.size) {
      throw new WitnessError(`inconsistent: the log shrank from ${state.size} to ${cp.size} entries`);
    }
    const proof = JSON.parse(await get(o, `proof/consistency?from=${state.size}&to=${cp.size}`)) as {
      hashes: string[];
    };
    const hashes = proof.hashes.map((h) => Buffer.from(h, 'base64'));
    if (!consistencyOk(state.size, cp.size, oldRoot, cp.root, hashes)) {
      throw new WitnessError(
        `inconsistent: the checkpoint at size ${cp.size} does not extend the one kept at size ${state.size} (root ${state.root}): the log's history was rewritten`,
      );
    }
    said += `, consistent with the one kept at size ${state.size}`;
  }
  const next: State = {
    origin: cp.origin,
    key,
    size: cp.size,
    root: cp.root.toString('base64'),
    note: cp.note,
  };
  await writeFile(`${o.stateFile}.tmp`, `${JSON.stringify(next, null, 2)}\n`);
  await rename(`${o.stateFile}.tmp`, o.stateFile);
  return said;
}
