/**
 * The runtime's subscriber to the evidence's domain events (semantics.md section 7): new trails,
 * artifact reports and attestations become flow-action notifications, and a change of an
 * artifact's provenance or compliance marks the environments where it runs for re-evaluation.
 */
import { actionsFor, type NotificationEvent } from '../../domain/triggers.js';
import { actionsRepository, type ActionRow } from '../../storage/repositories/actions.js';
import type { Db } from '../../storage/database.js';
import { orgsRepository } from '../../storage/repositories/orgs.js';
import type { DomainEvent } from '../scope/domain-events.js';
import { artifactUrls } from '../scope/links.js';
import { enqueueNotifications } from '../notifications/notifications.js';
import { markEnvironmentsRunning } from './reevaluation.js';
import { groupBy } from '../../group-by.js';

/** Per-organization views cached while the organization's epoch stands (the app's config cache). */
export interface ConfigCache {
  /** The epoch to pass to `set` for a view read from now on. */
  epoch(orgId: string): number;
  get<T>(orgId: string, key: string): T | undefined;
  set(orgId: string, key: string, value: unknown, epoch: number): void;
}

/** What the subscriber needs to know of an organization before it writes anything. */
interface OrgNotificationConfig {
  name: string;
  actions: ActionRow[];
}

const CONFIG_KEY = 'domain-events';

/** The events of each organization, in order. */
function byOrg(events: DomainEvent[]): Map<string, DomainEvent[]> {
  return groupBy(events, (e) => e.orgId);
}

/** The flow-action notifications and the fingerprints to re-evaluate that an org's events make. */
function planFor(
  orgName: string,
  list: DomainEvent[],
  publicUrl: string,
): { notifications: NotificationEvent[]; changed: Set<string> } {
  const notifications: NotificationEvent[] = [];
  for (const e of list) {
    const base = { org: orgName, timestamp: e.at.getTime() / 1000 };
    switch (e.type) {
      case 'trail.started':
        notifications.push({
          ...base,
          trigger: 'ON_STARTED_TRAIL',
          flow: e.flowName,
          trail: e.trailName,
          description: `Trail ${e.trailName} started in flow ${e.flowName}`,
        });
        break;
      case 'artifact.reported':
        notifications.push({
          ...base,
          trigger: 'ON_ATTESTED_PROVENANCE',
          flow: e.flowName,
          trail: e.trailName,
          description: `Artifact ${e.artifactName} reported in trail ${e.trailName}`,
          artifact: {
            name: e.artifactName,
            fingerprint: e.fingerprint,
            provenance: {
              flow: e.flowName,
              trail: e.trailName,
              status: e.state.toLowerCase(),
              commit: e.gitCommit,
              commit_url: e.commitUrl,
              build_url: e.buildUrl,
              html_url: artifactUrls(
                { publicUrl, org: { name: orgName } },
                { flow: e.flowName, fingerprint: e.fingerprint, id: e.artifactId },
              ).html_url,
            },
          },
        });
        break;
      case 'attestation.reported':
        notifications.push({
          ...base,
          trigger: 'ON_ATTESTATION',
          flow: e.flowName,
          trail: e.trailName,
          description: `Attestation ${e.attestationName} (${e.attestationType}) reported in trail ${e.trailName}`,
          attestation: { name: e.attestationName, type: e.attestationType, is_compliant: e.isCompliant },
        });
        break;
      case 'artifact.compliance-changed':
        // Notifies nobody: it only marks where the artifact runs (`toReevaluate`).
        break;
    }
  }
  return { notifications, changed: toReevaluate(list) };
}

/** The fingerprints an org's events leave to re-evaluate where they run. */
function toReevaluate(list: DomainEvent[]): Set<string> {
  const changed = new Set<string>();
  for (const e of list) {
    if (e.type === 'artifact.reported') {
      changed.add(e.fingerprint);
    } else if (e.type === 'artifact.compliance-changed') {
      for (const f of e.fingerprints) {
        changed.add(f);
      }
    }
  }
  return changed;
}

/** Turns the evidence's events into flow-action notifications and re-evaluation marks. */
export async function onDomainEvents(
  db: Db,
  events: DomainEvent[],
  publicUrl: string,
  configs: ConfigCache,
): Promise<{ marks: number; rows: number }> {
  let marks = 0;
  let rows = 0;
  for (const [orgId, list] of byOrg(events)) {
    let config = configs.get<OrgNotificationConfig>(orgId, CONFIG_KEY);
    if (!config) {
      const epoch = configs.epoch(orgId);
      const org = await orgsRepository.findById(db, orgId);
      if (!org) {
        continue;
      }
      config = { name: org.name, actions: await actionsRepository.list(db, orgId) };
      configs.set(orgId, CONFIG_KEY, config, epoch);
    }
    const { notifications, changed } = planFor(config.name, list, publicUrl);
    const at = list[list.length - 1]!.at;
    rows += await enqueueNotifications(db, orgId, notifications, at, config.actions);
    marks += await markEnvironmentsRunning(db, orgId, [...changed], 'provenance', at);
  }
  return { marks, rows };
}

/**
 * True when onDomainEvents would write nothing: every org's settings are cached, no event
 * reaches one of its actions and none names a fingerprint to re-evaluate.
 */
export function idleFor(events: DomainEvent[], publicUrl: string, configs: ConfigCache): boolean {
  for (const [orgId, list] of byOrg(events)) {
    const config = configs.get<OrgNotificationConfig>(orgId, CONFIG_KEY);
    if (!config) {
      return false;
    }
    if (toReevaluate(list).size > 0) {
      return false;
    }
    // Without actions no event notifies: nothing to build.
    if (config.actions.length === 0) {
      continue;
    }
    const { notifications } = planFor(config.name, list, publicUrl);
    if (notifications.some((n) => actionsFor(config.actions, n).length > 0)) {
      return false;
    }
  }
  return true;
}
