/**
 * Where an artifact runs, derived from its trail's event log (semantics.md sections 3 and 5):
 * per environment, the last runtime event decides: a start means running, a stop means exited.
 */

export interface RuntimeEventFact {
  type: string;
  environmentName: string;
  snapshotIndex: number;
  seq: number;
}

export interface RuntimePlaces {
  running: Array<{ environment_name: string; snapshot_index: number }>;
  exited: Array<{ environment_name: string; snapshot_index: number }>;
}

/** Running and exited places from the start/stop events of one artifact. */
export function runtimePlaces(events: readonly RuntimeEventFact[]): RuntimePlaces {
  const last = new Map<string, RuntimeEventFact>();
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    if (e.type === 'artifact_started_running' || e.type === 'artifact_stopped_running') {
      last.set(e.environmentName, e);
    }
  }
  const running: RuntimePlaces['running'] = [];
  const exited: RuntimePlaces['exited'] = [];
  for (const e of [...last.values()].sort((a, b) => a.environmentName.localeCompare(b.environmentName))) {
    const place = { environment_name: e.environmentName, snapshot_index: e.snapshotIndex };
    if (e.type === 'artifact_started_running') {
      running.push(place);
    } else {
      exited.push(place);
    }
  }
  return { running, exited };
}
