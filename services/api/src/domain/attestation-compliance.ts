/**
 * Whether one attestation is compliant, by type (semantics.md section 4, "Types"). Pure: the
 * custom-type evaluation (JSON Schema and jq) happens elsewhere and arrives here as results.
 */

/** junit: compliant iff every suite has 0 failures and 0 errors. */
export function junitCompliant(suites: ReadonlyArray<{ failures: number; errors: number }>): boolean {
  return suites.every((s) => s.failures === 0 && s.errors === 0);
}

/** Vulnerability scan (snyk): compliant iff every SARIF run has 0 high, medium and low results. */
export function scanCompliant(
  results: ReadonlyArray<{ high_count: number; medium_count: number; low_count: number }>,
): boolean {
  return results.every((r) => r.high_count === 0 && r.medium_count === 0 && r.low_count === 0);
}

/** pull_request: compliant iff at least one pull request was found. */
export function pullRequestCompliant(pullRequests: readonly unknown[]): boolean {
  return pullRequests.length > 0;
}

/** Ticket tracker (jira): compliant iff at least one issue and every referenced issue exists. */
export function ticketsCompliant(issues: ReadonlyArray<{ issue_exists: boolean }>): boolean {
  return issues.length > 0 && issues.every((i) => i.issue_exists);
}

/** Code quality (sonar): compliant iff the quality gate status is OK. */
export function qualityGateCompliant(results: { qualityGate?: { status?: string } | null }): boolean {
  return results.qualityGate?.status === 'OK';
}

/** custom:<type>: compliant iff the JSON schema validates and every jq rule returned `true`. */
export function customCompliant(
  schemaErrors: readonly string[],
  ruleResults: ReadonlyArray<{ result: unknown }>,
): boolean {
  return schemaErrors.length === 0 && ruleResults.every((r) => r.result === true);
}
