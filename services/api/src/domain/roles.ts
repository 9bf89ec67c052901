/**
 * Roles and what they allow (semantics.md section 2). Pure: the auth plugin asks, this answers.
 */

export const ROLES = ['reader', 'snapshotter', 'member', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Things a route may require. `authenticated` needs a valid key and nothing more. */
export const PERMISSIONS = [
  'authenticated',
  'read',
  'snapshot:report',
  'environment:create',
  'service-account:manage-own',
  'service-account:manage',
  'evidence:write',
  'flow:write',
  'environment:write',
  'environment:delete',
  'policy:write',
  'action:write',
  'attestation-type:write',
  'control:write',
  'org:admin',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const READER: Permission[] = ['authenticated', 'read'];
const SNAPSHOTTER: Permission[] = [
  ...READER,
  'snapshot:report',
  'environment:create',
  'service-account:manage-own',
];
const MEMBER: Permission[] = [
  ...SNAPSHOTTER,
  'evidence:write',
  'flow:write',
  'environment:write',
  'policy:write',
  'action:write',
  'attestation-type:write',
];
const ADMIN: Permission[] = [...PERMISSIONS];

const GRANTS: Record<Role, ReadonlySet<Permission>> = {
  reader: new Set(READER),
  snapshotter: new Set(SNAPSHOTTER),
  member: new Set(MEMBER),
  admin: new Set(ADMIN),
};

/** True when `role` may do what `permission` names. */
export function roleAllows(role: Role, permission: Permission): boolean {
  return GRANTS[role].has(permission);
}

/** Roles ordered by reach: reader < snapshotter < member < admin. */
export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

/** A principal may hand out no more than it holds: no key ever escalates its creator. */
export function canGrant(granter: Role, privilege: Role): boolean {
  return roleRank(privilege) <= roleRank(granter);
}

/** The permission an HTTP method needs by default: reads need `read`. */
export function isReadMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** A field of an existing environment that a `PUT /environments/{org}` would change. */
export type EnvironmentChange =
  'type' | 'description' | 'require_provenance' | 'archived' | 'included_environments' | 'policies';

/**
 * The snapshotter field rule (section 2): `environment:create` lets a reporter create the
 * environment it reports to, never change what exists. Changing an environment's policies,
 * description, type, flags or members needs `environment:write` (Member or Admin); attaching
 * policies does even on a create. No change at all is allowed to every role that may create.
 */
export function canChangeEnvironment(role: Role, changes: readonly EnvironmentChange[]): boolean {
  return changes.length === 0 || roleAllows(role, 'environment:write');
}

/** `{"<group>": {"<organization>": "<role>"}}` as configured (VERITY_OIDC_GROUP_ROLES). */
export type GroupRoleMap = Readonly<Record<string, Readonly<Record<string, Role>>>>;

/**
 * The role a person's groups give in each organization: the highest any of the groups gives.
 * Bounded by the groups the provider sends (the caller caps them) times the organizations
 * each configured group names.
 */
export function rolesFromGroups(mapping: GroupRoleMap, groups: readonly string[]): Map<string, Role> {
  const roles = new Map<string, Role>();
  for (const group of new Set(groups)) {
    const orgs = Object.hasOwn(mapping, group) ? mapping[group] : undefined;
    for (const [org, role] of Object.entries(orgs ?? {})) {
      const held = roles.get(org);
      if (held === undefined || roleRank(role) > roleRank(held)) {
        roles.set(org, role);
      }
    }
  }
  return roles;
}
