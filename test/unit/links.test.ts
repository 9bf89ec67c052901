import { describe, expect, it } from 'vitest';
import {
  apiUrl,
  artifactUrls,
  evidenceDownloadUrl,
  flowHtmlUrl,
  snapshotUrls,
  trailHtmlUrl,
} from '../../services/api/src/usecases/scope/links.js';

const base = { publicUrl: 'https://verity.example', org: { name: 'acme' } };

describe('links: one builder, one encoding', () => {
  it.each([
    ['flow page', flowHtmlUrl(base, 'back end'), 'https://verity.example/acme/flows/back%20end'],
    [
      'trail page',
      trailHtmlUrl(base, 'api', 'main/42'),
      'https://verity.example/acme/flows/api/trails/main%2F42',
    ],
    [
      'trail page at an attestation',
      trailHtmlUrl(base, 'api', 't1', 'a-1'),
      'https://verity.example/acme/flows/api/trails/t1?attestation_id=a-1',
    ],
    [
      'evidence download',
      evidenceDownloadUrl(base, { flow: 'api', trail: 'main/1', id: 'a-1' }),
      'https://verity.example/api/v2/attestations/acme/api/trail/main%2F1/attestation/a-1/evidence',
    ],
    [
      'api resource with a query',
      apiUrl(base, 'repos', new URLSearchParams({ page: '2', per_page: '20' })),
      'https://verity.example/api/v2/repos/acme?page=2&per_page=20',
    ],
    [
      'api resource without a query',
      apiUrl(base, 'repos', 'tags'),
      'https://verity.example/api/v2/repos/acme/tags',
    ],
  ])('%s', (_what, actual, expected) => {
    expect(actual).toBe(expected);
  });

  it('artifact: the console page and the API resource', () => {
    expect(artifactUrls(base, { flow: 'web app', fingerprint: 'ab12', id: 'x1' })).toEqual({
      html_url: 'https://verity.example/acme/flows/web%20app/artifacts/ab12?artifact_id=x1',
      api_url: 'https://verity.example/api/v2/artifacts/acme/web%20app/fingerprint/ab12',
    });
  });

  it('snapshot: the console page and the API resource', () => {
    expect(snapshotUrls(base, 'prod/eu', 7)).toEqual({
      html_url: 'https://verity.example/acme/environments/prod%2Feu/snapshots/7',
      api_url: 'https://verity.example/api/v2/snapshots/acme/prod%2Feu/7',
    });
  });
});
