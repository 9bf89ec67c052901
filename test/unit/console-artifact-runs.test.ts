/** The console reads where an artifact ran from the history lines the API writes. */
import { describe, expect, it } from 'vitest';
import { runsOf } from '../../services/console/src/features/flows/artifact-runs.js';
import { historyLine } from '../../services/api/src/usecases/evidence/artifact-present.js';
import type { TrailEventRow } from '../../services/api/src/storage/repositories/trail-events.js';

const at = (s: number) => new Date(s * 1000);
/** A history line exactly as the API presents the trail event. */
const line = (type: string, env: string, index: number, s: number) =>
  historyLine({
    type,
    data: { environment_name: env, snapshot_index: index },
    occurred_at: at(s),
  } as unknown as TrailEventRow)!;

describe('where an artifact ran', () => {
  it('pairs each start with the next exit in the same environment, and leaves open runs running', () => {
    const history = [
      historyLine({
        type: 'artifact_creation_reported',
        data: { reported_by: 'ci' },
        occurred_at: at(50),
      } as unknown as TrailEventRow)!,
      line('artifact_started_running', 'staging', 3, 100),
      line('artifact_started_running', 'prod-eu.1', 7, 200),
      line('artifact_stopped_running', 'staging', 9, 300),
      line('artifact_started_running', 'staging', 12, 400),
    ];
    expect(
      runsOf({ history, running: [], exited: [{ environment_name: 'staging', snapshot_index: 9 }] }),
    ).toEqual([
      { env: 'staging', from: { index: 3, at: 100 }, to: { index: 9, at: 300 } },
      { env: 'prod-eu.1', from: { index: 7, at: 200 }, to: null },
      { env: 'staging', from: { index: 12, at: 400 }, to: null },
    ]);
  });

  it('adds places the record says it runs in when their start is not in the history', () => {
    expect(
      runsOf({ history: [], running: [{ environment_name: 'prod', snapshot_index: 4 }], exited: [] }),
    ).toEqual([{ env: 'prod', from: { index: 4, at: 0 }, to: null }]);
  });

  it('adds exits the record lists when their run is older than the history it carries', () => {
    const history = [line('artifact_started_running', 'prod', 20, 500)];
    const exited = [
      { environment_name: 'prod', snapshot_index: 5 },
      { environment_name: 'staging', snapshot_index: 8 },
    ];
    expect(runsOf({ history, running: [], exited })).toEqual([
      { env: 'prod', from: { index: 20, at: 500 }, to: null },
      { env: 'prod', from: null, to: { index: 5, at: 0 } },
      { env: 'staging', from: null, to: { index: 8, at: 0 } },
    ]);
  });
});
