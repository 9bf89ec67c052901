/**
 * The evidence the demo attests, in the formats the kosli CLI sends: git commit and repository
 * information, JUnit results, SARIF reports, CycloneDX SBOMs, and the fixture files they come from.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Build, Service } from './plan.js';
import { seconds } from './wire.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
export const fixture = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');

/** `junit_results` as `kosli attest junit` reads them from the XML: one entry per `<testsuite>`. */
export function junitResults(xml: string) {
  return [...xml.matchAll(/<testsuite\s([^>]*)>/g)].map((m) => {
    const attrs: Record<string, string | undefined> = Object.fromEntries(
      [...m[1]!.matchAll(/([\w:.-]+)="([^"]*)"/g)].map((a): [string, string] => [a[1]!, a[2]!]),
    );
    const int = (k: string) => Number.parseInt(attrs[k] ?? '0', 10) || 0;
    const ts = attrs.timestamp
      ? Date.parse(attrs.timestamp.endsWith('Z') ? attrs.timestamp : `${attrs.timestamp}Z`)
      : NaN;
    return {
      name: attrs.name ?? '',
      failures: int('failures'),
      errors: int('errors'),
      skipped: int('skipped'),
      total: int('tests'),
      duration: Number.parseFloat(attrs.time ?? '0') || 0,
      ...(Number.isFinite(ts) ? { timestamp: ts / 1000 } : {}),
    };
  });
}

/** `git_commit_info` of a commit on main. */
export const commitInfo = (
  service: Service,
  commit: string,
  when: number,
  message: string,
  author: string,
) => ({
  sha1: commit,
  message,
  author: `${author[0]!.toUpperCase()}${author.slice(1)} <${author}@acme.example>`,
  timestamp: seconds(when),
  branch: 'main',
  url: `https://github.com/${service.repo}/commit/${commit}`,
});

/** `repo_info` of a service's repository. */
export const repoInfo = (service: Service) => ({
  url: `https://github.com/${service.repo}`,
  name: service.repo,
  id: String(100000 + service.repo.length),
  provider: 'github',
});

/** A SARIF 2.1.0 report of `tool` with these findings. */
export const sarif = (
  tool: string,
  findings: Array<{ id: string; message: string; level: string; uri: string; line: number }>,
) =>
  JSON.stringify({
    version: '2.1.0',
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    runs: [
      {
        tool: { driver: { name: tool, version: '1.1290.0' } },
        results: findings.map((f) => ({
          ruleId: f.id,
          level: f.level,
          message: { text: f.message },
          locations: [
            { physicalLocation: { artifactLocation: { uri: f.uri }, region: { startLine: f.line } } },
          ],
        })),
      },
    ],
  });

/** A small CycloneDX 1.5 SBOM of a payments image, as `syft -o cyclonedx-json` writes one. */
export function cycloneDx(b: Build): string {
  const components: Array<[string, string, string]> = [
    ['lodash', '4.17.20', 'pkg:npm/lodash@4.17.20'],
    ['express', '4.18.2', 'pkg:npm/express@4.18.2'],
    ['jsonwebtoken', '9.0.0', 'pkg:npm/jsonwebtoken@9.0.0'],
    ['pg', '8.11.3', 'pkg:npm/pg@8.11.3'],
    ['log4j-core', '2.14.1', 'pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1'],
    ['openssl', '3.0.11', 'pkg:deb/debian/openssl@3.0.11-1~deb12u2?arch=amd64&distro=debian-12'],
    ['zlib', '1.2.13', 'pkg:deb/debian/zlib1g@1:1.2.13.dfsg-1?arch=amd64&distro=debian-12'],
  ];
  return JSON.stringify({
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${b.fingerprint.slice(0, 8)}-${b.fingerprint.slice(8, 12)}-4${b.fingerprint.slice(13, 16)}-8${b.fingerprint.slice(17, 20)}-${b.fingerprint.slice(20, 32)}`,
    version: 1,
    metadata: {
      timestamp: new Date(b.at).toISOString(),
      tools: { components: [{ type: 'application', name: 'syft', version: '1.4.1' }] },
      component: { type: 'container', name: `${b.service.image}:${b.version}`, version: b.version },
    },
    components: components.map(([name, version, purl]) => ({
      type: 'library',
      'bom-ref': purl,
      name,
      version,
      purl,
    })),
  });
}
