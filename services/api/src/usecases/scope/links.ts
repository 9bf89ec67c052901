/**
 * Every link the API emits: `html_url` (a console page), `api_url` (a resource) and `next`/`self`
 * hrefs. One place, one encoding: each path segment a tenant chose is URL-escaped.
 */

/** Where links of one organization start. */
export interface LinkBase {
  publicUrl: string;
  org: { name: string };
}

/** URL-escapes one path segment. */
export const seg = (s: string): string => encodeURIComponent(s);

/** The console page of a flow. */
export function flowHtmlUrl(base: LinkBase, flow: string): string {
  return `${base.publicUrl}/${seg(base.org.name)}/flows/${seg(flow)}`;
}

/** The console page of a trail, optionally opened at one attestation. */
export function trailHtmlUrl(base: LinkBase, flow: string, trail: string, attestationId?: string): string {
  const at = attestationId === undefined ? '' : `?attestation_id=${seg(attestationId)}`;
  return `${flowHtmlUrl(base, flow)}/trails/${seg(trail)}${at}`;
}

/** The console page and API resource of an artifact. */
export function artifactUrls(
  base: LinkBase,
  a: { flow: string; fingerprint: string; id: string },
): { html_url: string; api_url: string } {
  return {
    html_url: `${flowHtmlUrl(base, a.flow)}/artifacts/${seg(a.fingerprint)}?artifact_id=${seg(a.id)}`,
    api_url: `${apiUrl(base, 'artifacts', a.flow, 'fingerprint', a.fingerprint)}`,
  };
}

/** Where an attestation's evidence file is downloaded. */
export function evidenceDownloadUrl(base: LinkBase, a: { flow: string; trail: string; id: string }): string {
  return apiUrl(base, 'attestations', a.flow, 'trail', a.trail, 'attestation', a.id, 'evidence');
}

/** The console page of an environment. */
export function environmentHtmlUrl(base: LinkBase, environment: string): string {
  return `${base.publicUrl}/${seg(base.org.name)}/environments/${seg(environment)}`;
}

/** The console page and API resource of an environment snapshot. */
export function snapshotUrls(
  base: LinkBase,
  environment: string,
  index: number,
): { html_url: string; api_url: string } {
  return {
    html_url: `${environmentHtmlUrl(base, environment)}/snapshots/${index}`,
    api_url: apiUrl(base, 'snapshots', environment, String(index)),
  };
}

/**
 * An API resource of the organization: `/api/v2/{collection}/{org}/{...segments}`, each segment
 * escaped, with an optional query (for `next` and `self` links).
 */
export function apiUrl(base: LinkBase, collection: string, ...rest: Array<string | URLSearchParams>): string {
  const query = rest.find((r): r is URLSearchParams => r instanceof URLSearchParams);
  const segments = rest.filter((r): r is string => typeof r === 'string');
  const path = [collection, base.org.name, ...segments].map(seg).join('/');
  const q = query && query.size > 0 ? `?${query.toString()}` : '';
  return `${base.publicUrl}/api/v2/${path}${q}`;
}
