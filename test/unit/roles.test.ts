/** Roles of semantics.md section 2, one row per role and permission. */
import { describe, expect, it } from 'vitest';
import {
  PERMISSIONS,
  ROLES,
  canChangeEnvironment,
  canGrant,
  roleAllows,
  type Permission,
  type Role,
} from '../../services/api/src/domain/roles.js';

const EXPECTED: Record<Role, Permission[]> = {
  reader: ['authenticated', 'read'],
  snapshotter: [
    'authenticated',
    'read',
    'snapshot:report',
    'environment:create',
    'service-account:manage-own',
  ],
  member: [
    'authenticated',
    'read',
    'snapshot:report',
    'environment:create',
    'service-account:manage-own',
    'evidence:write',
    'flow:write',
    'environment:write',
    'policy:write',
    'action:write',
    'attestation-type:write',
  ],
  admin: [...PERMISSIONS],
};

describe('roleAllows', () => {
  for (const role of ROLES) {
    for (const permission of PERMISSIONS) {
      const allowed = EXPECTED[role].includes(permission);
      it(`${allowed ? 'lets' : 'does not let'} a ${role} ${permission}`, () => {
        expect(roleAllows(role, permission)).toBe(allowed);
      });
    }
  }

  it('keeps controls, environment deletion and org settings for admins only', () => {
    for (const p of ['control:write', 'environment:delete', 'org:admin', 'service-account:manage'] as const) {
      expect(ROLES.filter((r) => roleAllows(r, p))).toEqual(['admin']);
    }
  });
});

describe('canGrant', () => {
  const table: Array<[Role, Role, boolean]> = [
    ['admin', 'admin', true],
    ['member', 'admin', false],
    ['member', 'member', true],
    ['snapshotter', 'member', false],
    ['snapshotter', 'snapshotter', true],
    ['snapshotter', 'reader', true],
    ['reader', 'reader', true],
  ];
  for (const [granter, privilege, ok] of table) {
    it(`${ok ? 'lets' : 'does not let'} a ${granter} grant ${privilege}`, () =>
      expect(canGrant(granter, privilege)).toBe(ok));
  }
});

describe('canChangeEnvironment: the snapshotter field rule (section 2)', () => {
  const fields = [
    'type',
    'description',
    'require_provenance',
    'archived',
    'included_environments',
    'policies',
  ] as const;
  it('a snapshotter may create an environment but not change its policies, description, type, flags or members', () => {
    for (const field of fields) {
      expect(canChangeEnvironment('snapshotter', [field]), field).toBe(false);
      expect(canChangeEnvironment('member', [field]), field).toBe(true);
      expect(canChangeEnvironment('admin', [field]), field).toBe(true);
    }
  });
  it('a PUT that changes nothing is allowed to every role', () => {
    for (const role of ROLES) {
      expect(canChangeEnvironment(role, []), role).toBe(true);
    }
  });
});
