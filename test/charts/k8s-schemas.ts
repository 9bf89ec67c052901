/**
 * Validation of rendered objects against the schemas of a current Kubernetes release.
 *
 * kubernetes-models ships, for every built-in kind, the JSON Schema of the Kubernetes OpenAPI
 * document compiled to an ajv validator; @kubernetes-models/prometheus-operator does the same
 * for the prometheus-operator CRDs (ServiceMonitor, PodMonitor, PrometheusRule). Neither refuses
 * unknown fields (the Kubernetes schemas leave additionalProperties open), so the chart tests
 * assert the fields that matter by value as well.
 */
import type { K8sObject } from './helm.js';

interface Model {
  validate(): void;
}
type ModelClass = new (data: unknown) => Model;

/** The module of a kind: built-in groups from kubernetes-models, monitoring from its package. */
function modulePath(apiVersion: string, kind: string): string {
  if (apiVersion.startsWith('monitoring.coreos.com/')) {
    return `@kubernetes-models/prometheus-operator/${apiVersion}/${kind}`;
  }
  return `kubernetes-models/${apiVersion}/${kind}`;
}

/**
 * Problems of one object against its kind's schema, as `path: message` lines; empty when it is
 * valid. An object of a kind no schema package knows is itself a problem.
 */
export async function schemaProblems(object: K8sObject): Promise<string[]> {
  const path = modulePath(object.apiVersion, object.kind);
  let mod: Record<string, ModelClass>;
  try {
    mod = (await import(path)) as Record<string, ModelClass>;
  } catch {
    return [`no schema for ${object.apiVersion} ${object.kind} (${path})`];
  }
  const Kind = mod[object.kind];
  if (!Kind) {
    return [`${path} exports no ${object.kind}`];
  }
  try {
    new Kind(structuredClone(object)).validate();
    return [];
  } catch (err) {
    const errors = (err as { errors?: Array<{ instancePath: string; message?: string; params?: unknown }> })
      .errors;
    if (!errors) {
      return [String(err)];
    }
    return errors.map(
      (e) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'} ${JSON.stringify(e.params)}`,
    );
  }
}
