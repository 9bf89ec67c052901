/** Search by fingerprint or commit, and asserts (reference/cli-requests.md 3.3). */
import { z } from 'zod';
import { AttestationStatus } from './trails.js';
import { ArtifactHistory, ArtifactHistoryTotal } from './artifacts.js';

const Resolved = z.object({ type: z.string(), count: z.number().int(), matches: z.array(z.string()) });

/** One artifact found by search. */
export const SearchArtifact = z
  .object({
    fingerprint: z.string(),
    name: z.string(),
    flow: z.string(),
    pipeline: z.string(),
    trail: z.string(),
    template_reference_name: z.string().nullable(),
    git_commit: z.string().nullable(),
    has_provenance: z.boolean(),
    commit_url: z.string().nullable(),
    build_url: z.string().nullable(),
    html_url: z.string(),
    api_url: z.string(),
    compliance_state: z.string(),
    running_in: z.array(z.string()),
    exited_from: z.array(z.string()),
    history: ArtifactHistory,
    history_total: ArtifactHistoryTotal,
  })
  .meta({ id: 'SearchArtifact' });

/** `GET /search/{org}/sha/{value}`. */
export const SearchResult = z
  .object({
    resolved_to: z.object({
      type: z.enum(['fingerprint', 'commit']),
      full_match: z.string().nullable(),
      fingerprints: Resolved,
      commits: Resolved,
    }),
    artifacts: z.array(SearchArtifact),
  })
  .meta({ id: 'SearchResult' });

/** The compliance of the artifact in one flow, as assert shows it. */
export const AssertFlow = z
  .object({
    flow: z.string(),
    trail: z.string(),
    compliant: z.boolean(),
    compliance_status: z.object({
      status: z.string(),
      is_compliant: z.boolean(),
      attestations_statuses: z.array(AttestationStatus.extend({ scope: z.enum(['trail', 'artifact']) })),
    }),
    html_url: z.string(),
  })
  .meta({ id: 'AssertFlow' });

/** `GET /asserts/{org}/fingerprint/{fp}`, shaped for the flow, environment and policy scopes. */
export const AssertResult = z
  .object({
    fingerprint: z.string(),
    compliant: z.boolean(),
    scope: z.enum(['flow', 'environment', 'policy']),
    environment: z.string().nullable(),
    policy_evaluations: z.array(z.record(z.string(), z.unknown())),
    allow_listing: z.record(z.string(), z.unknown()).nullable(),
    flows: z.array(AssertFlow),
    flow: z.string().nullable(),
    trail: z.string().nullable(),
    html_url: z.string(),
  })
  .meta({ id: 'AssertResult' });

/** `GET /search/{org}/names?q=`: flows, trails, environments and artifacts whose name contains q. */
export const NameSearchResult = z
  .object({
    query: z.string(),
    /** The most of each kind answered; `more` says a kind had more matches than that. */
    limit: z.number().int(),
    flows: z.array(z.object({ name: z.string(), description: z.string(), html_url: z.string() })),
    trails: z.array(
      z.object({ flow: z.string(), name: z.string(), compliance_state: z.string(), html_url: z.string() }),
    ),
    environments: z.array(z.object({ name: z.string(), type: z.string(), html_url: z.string() })),
    artifacts: z.array(
      z.object({
        name: z.string(),
        fingerprint: z.string(),
        flow: z.string(),
        trail: z.string(),
        compliance_state: z.string(),
        html_url: z.string(),
      }),
    ),
    more: z.object({
      flows: z.boolean(),
      trails: z.boolean(),
      environments: z.boolean(),
      artifacts: z.boolean(),
    }),
  })
  .meta({ id: 'NameSearchResult' });
