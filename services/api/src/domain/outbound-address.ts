/**
 * Which network addresses Verity may send notifications to (semantics.md section 7): public
 * unicast only, unless the operator allows a host or range (`VERITY_OUTBOUND_ALLOW`). Loopback,
 * private, link-local (cloud metadata), unique-local, CGNAT and other special ranges are refused.
 */
import ipaddr from 'ipaddr.js';

/** Hosts and CIDR ranges an operator allows despite the rules. */
export interface OutboundAllowList {
  hosts: string[];
  cidrs: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
}

/** Parses `VERITY_OUTBOUND_ALLOW`: comma-separated host names, addresses and CIDRs. */
export function parseOutboundAllowList(
  text: string | undefined,
): { ok: true; value: OutboundAllowList } | { ok: false; reason: string } {
  const value: OutboundAllowList = { hosts: [], cidrs: [] };
  for (const raw of (text ?? '').split(',')) {
    const item = raw.trim().toLowerCase();
    if (item === '') {
      continue;
    }
    if (item.includes('/')) {
      try {
        value.cidrs.push(ipaddr.parseCIDR(item));
      } catch {
        return { ok: false, reason: `'${item}' is not a CIDR range` };
      }
    } else if (ipaddr.isValid(item)) {
      const addr = ipaddr.process(item);
      value.cidrs.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^[a-z0-9.-]+$/.test(item)) {
      value.hosts.push(item.replace(/\.$/, ''));
    } else {
      return { ok: false, reason: `'${item}' is neither a host name, an address nor a CIDR range` };
    }
  }
  return { ok: true, value };
}

/** Why an address may not be reached, or null when it may. `host` is the name it was resolved from. */
export function refusedAddress(address: string, host: string, allow: OutboundAllowList): string | null {
  if (!ipaddr.isValid(address)) {
    return `'${address}' is not an IP address`;
  }
  // ::ffff:127.0.0.1 is 127.0.0.1.
  const addr = ipaddr.process(address);
  if (allow.hosts.includes(host.toLowerCase().replace(/\.$/, ''))) {
    return null;
  }
  for (const [range, bits] of allow.cidrs) {
    if (range.kind() === addr.kind() && addr.match([range, bits] as never)) {
      return null;
    }
  }
  const range = addr.range();
  if (range === 'unicast') {
    return null;
  }
  return `${host} resolves to ${address}, a ${range} address; set VERITY_OUTBOUND_ALLOW to permit it`;
}
