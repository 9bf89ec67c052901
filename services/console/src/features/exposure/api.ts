/** The exposure query: one request per page, whatever the number of artifacts and environments. */
import { useQuery } from '@tanstack/react-query';
import { apiUrl, getJson, seg } from '../../lib/api-client';
import type { ExposureResult } from '../../lib/contract';

export interface ExposureParams {
  purl: string;
  fingerprint: string;
  commit: string;
  /** As the API reads them: ISO date-times or epoch seconds; '' when absent. */
  from: string;
  to: string;
}

export function useExposure(org: string, p: ExposureParams) {
  return useQuery({
    queryKey: ['exposure', org, p],
    queryFn: ({ signal }) =>
      getJson<ExposureResult>(
        apiUrl(`/exposure/${seg(org)}`, {
          purl: p.purl,
          fingerprint: p.fingerprint,
          commit: p.commit,
          from: p.from,
          to: p.to,
        }),
        signal,
      ),
    enabled: Boolean(p.purl || p.fingerprint || p.commit),
    retry: false,
  });
}
