/** Console paths of the policy pages, each segment encoded. */
export const policiesPath = (org: string) => `/${encodeURIComponent(org)}/policies`;

export const policyPath = (org: string, name: string) =>
  `/${encodeURIComponent(org)}/policies/${encodeURIComponent(name)}`;
