/**
 * Every migration, listed statically so a compiled build needs no directory scan.
 * Names sort in the order they apply; shipped migrations are never edited.
 * Ranges: 0001-0099 identity and platform, 0100-0199 evidence, 0200-0299 runtime,
 * 0300-0399 cross-area, and changes to an area after it shipped.
 */
import type { Migration } from 'kysely';
import * as m0001 from './0001_identity.js';
import * as m0100 from './0100_evidence.js';
import * as m0200 from './0200_runtime.js';
import * as m0300 from './0300_change_notifications.js';
import * as m0301 from './0301_action_notifications.js';
import * as m0302 from './0302_evidence_change_log.js';
import * as m0303 from './0303_trail_facts.js';
import * as m0304 from './0304_evidence_change_log_per_statement.js';
import * as m0305 from './0305_trail_references_per_statement.js';
import * as m0320 from './0320_notification_targets.js';
import * as m0350 from './0350_sbom_components.js';
import * as m0351 from './0351_runtime_states_by_fingerprint.js';
import * as m0360 from './0360_service_account_display_name.js';
import * as m0370 from './0370_evidence_file_references.js';
import * as m0371 from './0371_catalog_notifications.js';
import * as m0372 from './0372_evidence_file_age.js';
import * as m0380 from './0380_hot_evidence_rows.js';
import * as m0381 from './0381_trail_reference_check_planned_per_statement.js';
import * as m0382 from './0382_trail_events_runtime.js';
import * as m0383 from './0383_sbom_components_paging.js';
import * as m0384 from './0384_people.js';
import * as m0385 from './0385_oidc_trusts.js';
import * as m0386 from './0386_notification_config.js';
import * as m0387 from './0387_deployments.js';
import * as m0388 from './0388_evaluations.js';
import * as m0390 from './0390_evidence_files_elsewhere.js';
import * as m0395 from './0395_retention.js';
import * as m0400 from './0400_transparency_log.js';
import * as m0410 from './0410_attestation_signatures.js';
import * as m0415 from './0415_name_search_trigrams.js';
import * as m0420 from './0420_runtime_current_by_fingerprint.js';
import * as m0425 from './0425_deployments_backfill.js';
import * as m0430 from './0430_log_leaves_and_tiles.js';
import * as m0431 from './0431_log_queue_one_index.js';
import * as m0432 from './0432_deployments_deferred.js';
import * as m0433 from './0433_live_in_current_states.js';
import * as m0434 from './0434_log_columns_without_statistics.js';

export const migrations: Record<string, Migration> = {
  '0001_identity': m0001,
  '0100_evidence': m0100,
  '0200_runtime': m0200,
  '0300_change_notifications': m0300,
  '0301_action_notifications': m0301,
  '0302_evidence_change_log': m0302,
  '0303_trail_facts': m0303,
  '0304_evidence_change_log_per_statement': m0304,
  '0305_trail_references_per_statement': m0305,
  '0320_notification_targets': m0320,
  '0350_sbom_components': m0350,
  '0351_runtime_states_by_fingerprint': m0351,
  '0360_service_account_display_name': m0360,
  '0370_evidence_file_references': m0370,
  '0371_catalog_notifications': m0371,
  '0372_evidence_file_age': m0372,
  '0380_hot_evidence_rows': m0380,
  '0381_trail_reference_check_planned_per_statement': m0381,
  '0382_trail_events_runtime': m0382,
  '0383_sbom_components_paging': m0383,
  '0384_people': m0384,
  '0385_oidc_trusts': m0385,
  '0386_notification_config': m0386,
  '0387_deployments': m0387,
  '0388_evaluations': m0388,
  '0390_evidence_files_elsewhere': m0390,
  '0395_retention': m0395,
  '0400_transparency_log': m0400,
  '0410_attestation_signatures': m0410,
  '0415_name_search_trigrams': m0415,
  '0420_runtime_current_by_fingerprint': m0420,
  '0425_deployments_backfill': m0425,
  '0430_log_leaves_and_tiles': m0430,
  '0431_log_queue_one_index': m0431,
  '0432_deployments_deferred': m0432,
  '0433_live_in_current_states': m0433,
  '0434_log_columns_without_statistics': m0434,
};
