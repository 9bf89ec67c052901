/**
 * The targets of a notification config as Verity stores them (reference/peers-2026-11b.md
 * section 2): URL hosts and e-mail domains lowercased, trailing slashes of URL paths dropped; one
 * EMAIL target holds every address, and each webhook is listed once.
 */
import type { NotificationTarget } from '../../../shared/contract/notification-config.js';

/** A webhook or Slack URL as stored: lowercased host, no trailing slash on the path. */
export function normalizeWebhookUrl(url: string): string {
  const u = new URL(url);
  u.pathname = u.pathname.replace(/\/+$/, '');
  const text = u.toString();
  return u.search === '' && u.hash === '' ? text.replace(/\/+$/, '') : text;
}

/** An e-mail address as stored: the domain lowercased, the local part as given. */
export function normalizeEmail(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? address : `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`;
}

/** Normalized targets, or the reasons (by body field) they cannot be stored. */
export function normalizeTargets(
  targets: readonly NotificationTarget[],
): { ok: true; targets: NotificationTarget[] } | { ok: false; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const seenUrls = new Map<string, number>();
  let emailAt: number | undefined;
  const out = targets.map((t, i): NotificationTarget => {
    if (t.type === 'EMAIL') {
      if (emailAt !== undefined) {
        errors[`body.targets[${i}]`] = `one EMAIL target holds every address (see targets[${emailAt}])`;
      }
      emailAt ??= i;
      const emails = t.emails.map(normalizeEmail);
      const seen = new Set<string>();
      const repeated = emails.find((e) => seen.size === seen.add(e).size);
      if (repeated !== undefined) {
        errors[`body.targets[${i}].emails`] = `'${repeated}' is listed twice`;
      }
      return { type: 'EMAIL', emails };
    }
    const webhook = normalizeWebhookUrl(t.webhook);
    const first = seenUrls.get(webhook);
    if (first !== undefined) {
      errors[`body.targets[${i}].webhook`] = `the same URL as targets[${first}]`;
    }
    seenUrls.set(webhook, first ?? i);
    return { ...t, webhook };
  });
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, targets: out };
}
