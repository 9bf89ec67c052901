/**
 * Action triggers and what they send (spec: Events; semantics.md section 7). Environment actions
 * react to starts, exits, scaling, allow-listing and compliance transitions; flow actions to new
 * trails, artifact reports, attestations and releases. ON_APPROVAL is accepted and never fires.
 */

import { ENV_TRIGGERS, FLOW_TRIGGERS } from '../../../shared/contract/actions.js';

export { ENV_TRIGGERS, FLOW_TRIGGERS };
export type EnvTrigger = (typeof ENV_TRIGGERS)[number];
export type FlowTrigger = (typeof FLOW_TRIGGERS)[number];
export type Trigger = EnvTrigger | FlowTrigger;
/**
 * What Verity raises itself, for notification configs (never an action's trigger): a
 * service-account key about to expire, or expired.
 */
export type KeyExpiryTrigger = 'ON_API_KEY_EXPIRING' | 'ON_API_KEY_EXPIRED' | 'ON_LOG_CHECKPOINT';
/** Every trigger an event may carry. */
export type EventTrigger = Trigger | KeyExpiryTrigger;

/** The `event_type` of webhook payloads for each trigger. */
export const EVENT_TYPES: Record<EventTrigger, string> = {
  ON_STARTED_ARTIFACT: 'ARTIFACT_STARTED',
  ON_EXITED_ARTIFACT: 'ARTIFACT_EXITED',
  ON_SCALED_ARTIFACT: 'ARTIFACT_SCALED',
  ON_ALLOWED_ARTIFACT: 'ARTIFACT_ALLOWED',
  ON_NON_COMPLIANT_ENV: 'ENVIRONMENT_NON_COMPLIANT',
  ON_COMPLIANT_ENV: 'ENVIRONMENT_COMPLIANT',
  ON_STARTED_TRAIL: 'TRAIL_STARTED',
  ON_ATTESTED_PROVENANCE: 'ARTIFACT_REPORTED',
  ON_ATTESTATION: 'ATTESTATION_REPORTED',
  ON_APPROVAL: 'APPROVAL_REPORTED',
  ON_RELEASE: 'ARTIFACT_RELEASED',
  ON_API_KEY_EXPIRING: 'API_KEY_EXPIRING',
  ON_API_KEY_EXPIRED: 'API_KEY_EXPIRED',
  ON_LOG_CHECKPOINT: 'LOG_CHECKPOINT',
};

/** Triggers not allowed for an action type (section 7: triggers are validated against the type). */
export function invalidTriggers(type: 'env' | 'flow', triggers: readonly string[]): string[] {
  const allowed: readonly string[] = type === 'env' ? ENV_TRIGGERS : FLOW_TRIGGERS;
  return triggers.filter((t) => !allowed.includes(t));
}

/**
 * The compliance trigger of a change of environment compliance (section 7: transitions only).
 * A move to a known verdict fires; staying, or becoming unknown (policies detached), does not.
 */
export function complianceTrigger(before: boolean | null, after: boolean | null): EnvTrigger | null {
  if (after === before || after === null) {
    return null;
  }
  return after ? 'ON_COMPLIANT_ENV' : 'ON_NON_COMPLIANT_ENV';
}

/** A change worth telling someone about, before it is fanned out to actions and targets. */
export interface NotificationEvent {
  trigger: EventTrigger;
  org: string;
  /** Epoch seconds. */
  timestamp: number;
  description: string;
  environment?: string;
  flow?: string;
  trail?: string;
  snapshot?: {
    index: number;
    status: 'compliant' | 'non-compliant' | 'unknown';
    html_url: string;
    api_url: string;
  };
  artifact?: {
    name: string;
    fingerprint: string;
    provenance?: {
      flow: string;
      trail: string;
      status: string;
      commit: string | null;
      commit_url: string | null;
      build_url: string | null;
      html_url: string;
    } | null;
  };
  attestation?: { name: string; type: string; is_compliant: boolean | null };
  /** Key-expiry warnings: the key (never its secret) and the threshold crossed (0: expired). */
  api_key?: {
    id: string;
    description: string;
    service_account: string;
    /** Epoch seconds. */
    expires_at: number;
    /** The same moment in ISO 8601 UTC, for people. */
    expires_at_utc: string;
    days_before_expiry: number;
  };
  /** A new signed checkpoint of the organization's transparency log (C2SP tlog-checkpoint note). */
  checkpoint?: { origin: string; tree_size: number; note: string };
}

/** An action as trigger matching sees it. */
export interface ActionSubscription {
  id: string;
  type: 'env' | 'flow';
  environments: readonly string[];
  flows: readonly string[];
  triggers: readonly string[];
}

/** The actions an event reaches: same kind, subscribed to the trigger, naming its environment or flow. */
export function actionsFor<T extends ActionSubscription>(
  actions: readonly T[],
  event: NotificationEvent,
): T[] {
  if (event.trigger === 'ON_APPROVAL') {
    return [];
  }
  return actions.filter((a) => {
    if (!a.triggers.includes(event.trigger)) {
      return false;
    }
    if (a.type === 'env') {
      return event.environment !== undefined && a.environments.includes(event.environment);
    }
    return event.flow !== undefined && a.flows.includes(event.flow);
  });
}

/** The webhook body, payload version 1.0 (reference: kosli-semantics.md section 11). */
export function webhookPayload(event: NotificationEvent): Record<string, unknown> {
  return {
    version: '1.0',
    timestamp: String(Math.floor(event.timestamp)),
    org: event.org,
    ...(event.environment !== undefined ? { environment: event.environment } : {}),
    ...(event.flow !== undefined ? { flow: event.flow } : {}),
    ...(event.trail !== undefined ? { trail: event.trail } : {}),
    event_type: EVENT_TYPES[event.trigger],
    description: event.description,
    ...(event.snapshot ? { snapshot: { ...event.snapshot, index: String(event.snapshot.index) } } : {}),
    ...(event.artifact ? { artifact: event.artifact } : {}),
    ...(event.attestation ? { attestation: event.attestation } : {}),
    ...(event.api_key ? { api_key: event.api_key } : {}),
    ...(event.checkpoint ? { checkpoint: event.checkpoint } : {}),
  };
}

function headline(event: NotificationEvent): string {
  if (event.api_key) {
    return `${EVENT_TYPES[event.trigger]}: service account ${event.api_key.service_account} (${event.org})`;
  }
  const where = event.environment ? `environment ${event.environment}` : `flow ${event.flow ?? ''}`;
  return `${EVENT_TYPES[event.trigger]} in ${where} (${event.org})`;
}

function facts(event: NotificationEvent): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (event.artifact) {
    out.push(['Artifact', event.artifact.name], ['Fingerprint', event.artifact.fingerprint]);
    if (event.artifact.provenance) {
      out.push(['Flow', event.artifact.provenance.flow], ['Trail', event.artifact.provenance.trail]);
    }
  }
  if (event.trail && !event.artifact) {
    out.push(['Trail', event.trail]);
  }
  if (event.attestation) {
    out.push(['Attestation', `${event.attestation.name} (${event.attestation.type})`]);
  }
  if (event.snapshot) {
    out.push(['Snapshot', `#${event.snapshot.index} (${event.snapshot.status})`]);
  }
  if (event.api_key) {
    out.push(
      ['Service account', event.api_key.service_account],
      ['Key', `${event.api_key.description} (${event.api_key.id})`],
      ['Expires at', event.api_key.expires_at_utc],
    );
  }
  return out;
}

/** Escapes text for Slack mrkdwn, where &, < and > are control characters. */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A Slack incoming-webhook message with blocks. */
export function slackMessage(event: NotificationEvent): Record<string, unknown> {
  const title = headline(event);
  const fields = facts(event).map(([k, v]) => ({ type: 'mrkdwn', text: `*${k}*\n${slackEscape(v)}` }));
  const link = event.snapshot?.html_url ?? event.artifact?.provenance?.html_url;
  return {
    text: `${title}: ${event.description}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: title.slice(0, 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: slackEscape(event.description) } },
      ...(fields.length > 0 ? [{ type: 'section', fields: fields.slice(0, 10) }] : []),
      ...(link
        ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: `<${link}|Open in Verity>` }] }]
        : []),
    ],
  };
}

/** Escapes text for HTML e-mail bodies: user-controlled names never become markup. */
export function htmlEscape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** An e-mail: subject, plain text and HTML (escaped). */
export function emailMessage(event: NotificationEvent): { subject: string; text: string; html: string } {
  const title = headline(event);
  const rows = facts(event);
  const text = [event.description, '', ...rows.map(([k, v]) => `${k}: ${v}`)].join('\n');
  const html = [
    `<h2>${htmlEscape(title)}</h2>`,
    `<p>${htmlEscape(event.description)}</p>`,
    rows.length > 0
      ? `<table>${rows.map(([k, v]) => `<tr><th align="left">${htmlEscape(k)}</th><td>${htmlEscape(v)}</td></tr>`).join('')}</table>`
      : '',
  ].join('\n');
  return { subject: `[Verity] ${title}`.replace(/[\r\n]+/g, ' ').slice(0, 200), text, html };
}

/**
 * Delay before retry `attempt` (1-based): exponential from `baseMs`, capped, with "equal jitter"
 * (half fixed, half drawn from `random` in [0, 1)) so failing targets do not retry in lockstep.
 */
export function retryDelayMs(attempt: number, random: number, baseMs = 1000, maxMs = 15 * 60_000): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + (exp / 2) * random);
}
