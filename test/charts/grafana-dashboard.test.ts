/**
 * The Grafana dashboard of charts/verity: an opt-in ConfigMap the dashboard sidecar finds by its
 * label, whose every query is valid PromQL reading only metrics a built API exports.
 */
import { parser as promql } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { render, type K8sObject } from './helm.js';

const CHART = 'verity';
const dashboardOf = (objects: K8sObject[]) =>
  objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'verity-dashboard');

interface Panel {
  title: string;
  type: string;
  targets?: Array<{ expr: string }>;
}

/** Grafana replaces its interval variables before Prometheus sees a query; so do we. */
const asPrometheusSees = (expr: string) =>
  expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '1m');

/** The metric names a PromQL expression reads; throws on a syntax error. */
function metricsRead(expr: string): string[] {
  const tree = promql.parse(expr);
  const names: string[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) {
        throw new Error(`not valid PromQL at ${node.from}: ${expr}`);
      }
      const parent = node.node.parent;
      if (node.name === 'Identifier' && parent?.name === 'VectorSelector') {
        names.push(expr.slice(node.from, node.to));
      }
    },
  });
  return names;
}

describe('the Grafana dashboard', async () => {
  const byDefault = await render(CHART);
  const objects = await render(CHART, { values: { grafana: { dashboard: { enabled: true } } } });
  const configMap = dashboardOf(objects)!;
  const dashboard = JSON.parse(configMap.data['verity.json']) as {
    title: string;
    panels: Panel[];
    templating: { list: Array<{ name: string; query?: string | { query: string } }> };
  };
  const queries = dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })),
  );

  let t: TestApp;
  let exported: Set<string>;
  beforeAll(async () => {
    t = await createTestApp();
    exported = new Set();
    for (const metric of await t.app.metrics.registry.getMetricsAsJSON()) {
      exported.add(metric.name);
      if (String(metric.type) === 'histogram') {
        for (const suffix of ['_bucket', '_sum', '_count']) {
          exported.add(`${metric.name}${suffix}`);
        }
      }
    }
  });
  afterAll(async () => t?.close());

  it('is opt-in', () => {
    expect(dashboardOf(byDefault)).toBeUndefined();
  });

  it('carries the sidecar label, whose key and value can be changed', async () => {
    expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    const custom = await render(CHART, {
      values: {
        grafana: { dashboard: { enabled: true, labelKey: 'grafana.io/dashboard', labelValue: 'verity' } },
      },
    });
    expect(dashboardOf(custom)!.metadata.labels).toMatchObject({ 'grafana.io/dashboard': 'verity' });
    expect(dashboardOf(custom)!.metadata.labels!.grafana_dashboard).toBeUndefined();
  });

  it('writes every query as valid PromQL (the check can fail)', () => {
    expect(() => metricsRead('sum(rate(x{a="b"[5m]))')).toThrow(/not valid PromQL/);
    expect(queries.length).toBeGreaterThanOrEqual(10);
    for (const q of queries) {
      expect(() => metricsRead(asPrometheusSees(q.expr)), q.panel).not.toThrow();
    }
  });

  it('reads only metrics the API exports (histogram series included)', () => {
    expect(exported.has('verity_http_request_duration_seconds_bucket')).toBe(true);
    expect(exported.has('verity_no_such_metric')).toBe(false);
    const read = new Set(queries.flatMap((q) => metricsRead(asPrometheusSees(q.expr))));
    for (const v of dashboard.templating.list) {
      const query = typeof v.query === 'string' ? v.query : v.query?.query;
      for (const m of query?.matchAll(/label_values\((\w+)/g) ?? []) {
        read.add(m[1]!);
      }
    }
    for (const name of read) {
      expect(exported, `${name} is not exported`).toContain(name);
    }
  });

  it('shows compliance, report and snapshot age, ingest rate and latency, notifications, the database and deployments', () => {
    const read = new Set(queries.flatMap((q) => metricsRead(asPrometheusSees(q.expr))));
    expect([...read].sort()).toEqual(
      expect.arrayContaining([
        'verity_database_available',
        'verity_deployment_lead_time_seconds_bucket',
        'verity_deployments_total',
        'verity_environment_compliant',
        'verity_environment_last_report_age_seconds',
        'verity_environment_snapshot_age_seconds',
        'verity_http_request_duration_seconds_bucket',
        'verity_http_requests_total',
        'verity_notifications_total',
        'verity_reports_total',
      ]),
    );
    // Every query selects one release the way the ServiceMonitor labels its series.
    for (const q of queries) {
      expect(q.expr, q.panel).toContain('job=~"$job",namespace=~"$namespace"');
    }
  });
});
