/**
 * A new schema whose organization is grown to a number of attestations, as the pipeline
 * benchmark's growth part, the A/B tool and the diagnosis use it: one CI run through the API as
 * the template (the flow and custom type set up as the workloads need them), then SQL clones of
 * it (pipeline-seed.ts).
 */
import { FLOW, pipeline, setupFlow } from './pipeline-ci.js';
import { Recorder } from './pipeline-client.js';
import { seedOrganization } from './pipeline-seed.js';
import { newSchema, startApiProcess } from './pipeline-server.js';

export type GrownSchema = Awaited<ReturnType<typeof newSchema>> & {
  seeded: Awaited<ReturnType<typeof seedOrganization>>;
};

/** The schema, seeded; dropped again if seeding fails. */
export async function grownSchema(
  prefix: string,
  attestations: number,
  log: (line: string) => void,
): Promise<GrownSchema> {
  const s = await newSchema(prefix);
  try {
    const api = await startApiProcess({ schema: s.schema });
    try {
      await setupFlow(api);
      await pipeline(api, new Recorder(), 'seed-template');
    } finally {
      await api.stop();
    }
    const seeded = await seedOrganization(s.url, {
      org: 'bench',
      flowName: FLOW,
      templateTrail: 'seed-template',
      attestations,
      log,
    });
    return { ...s, seeded };
  } catch (err) {
    await s.drop();
    throw err;
  }
}
