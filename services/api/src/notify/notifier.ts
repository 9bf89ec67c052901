/**
 * The notification worker: claims due outbox rows, delivers each to its target, records the
 * result on the row and the target, and retries failures with exponential backoff and jitter.
 * Delivery is at least once: a row is marked delivered only after its target accepted it.
 *
 * Deliveries run side by side and settle one by one: each has a total deadline, at most
 * `batchSize` are in flight on this replica and at most a quarter of them for one
 * organization, and a slot that frees is refilled at once, so a slow or hostile receiver holds
 * only its own deliveries. A row whose target was replaced or removed is dropped, not sent.
 */
import nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { OutboundAllowList } from '../domain/outbound-address.js';
import {
  emailMessage,
  retryDelayMs,
  slackMessage,
  webhookPayload,
  type NotificationEvent,
} from '../domain/triggers.js';
import type { Db } from '../storage/database.js';
import {
  actionsRepository,
  outboxRepository,
  type ActionTargetRow,
  type OutboxRow,
} from '../storage/repositories/actions.js';
import { notificationConfigsRepository } from '../storage/repositories/notification-configs.js';
import { signingKeySource, signingKeysFor, signWebhook } from '../domain/webhook-signing.js';
import { orgSigningKey } from '../usecases/notifications/webhook-signing.js';
import { postJson, RefusedError, withDeadline } from './outbound.js';

export interface NotifierOptions {
  db: Db;
  clock: () => Date;
  log: FastifyBaseLogger;
  allow: OutboundAllowList;
  /** Server-wide signing key: signs webhooks of targets without their own secret, instead of the org's key. */
  webhookSecret: string | undefined;
  smtpUrl: string | undefined;
  emailFrom: string;
  timeoutMs: number;
  /** PEM certificates https deliveries trust besides the system's authorities. */
  outboundCa?: string;
  maxAttempts: number;
  leaseMs?: number;
  /** Deliveries in flight at most on this replica. */
  batchSize?: number;
  random?: () => number;
  /** Called once per delivery attempt, for metrics. */
  onResult?: (targetType: string, result: 'success' | 'failure' | 'refused') => void;
}

/** What a delivery needs of its target. */
type DeliveryTarget = Pick<ActionTargetRow, 'type' | 'webhook' | 'emails' | 'secret'>;
type DeliveryResult = { ok: true; at: Date } | { ok: false; at: Date; error: string };

/** A row's target and where its delivery result is recorded. */
interface Destination {
  target: DeliveryTarget;
  record(result: DeliveryResult): Promise<void>;
}

/** Header names of a signed webhook. The signature is HMAC-SHA256 over `<timestamp>.<body>`. */
export const SIGNATURE_HEADER = 'x-verity-signature';
export const TIMESTAMP_HEADER = 'x-verity-timestamp';

export class Notifier {
  private mailer: Transporter | undefined;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perOrg = new Map<string, number>();
  private readonly capacity: number;
  private readonly perOrgCap: number;
  private settled: (() => void) | undefined;

  constructor(private readonly o: NotifierOptions) {
    this.capacity = Math.max(1, o.batchSize ?? 20);
    this.perOrgCap = Math.max(1, Math.floor(this.capacity / 4));
  }

  /** Called whenever a delivery settles (a slot is free: the worker loop claims more). */
  onSettled(callback: () => void): void {
    this.settled = callback;
  }

  private transport(): Transporter {
    if (!this.o.smtpUrl) {
      throw new RefusedError('no SMTP server configured (SMTP_URL)');
    }
    if (!this.mailer) {
      // Idle bounds on the SMTP exchange too, so a connection given up at the deadline ends.
      const url = new URL(this.o.smtpUrl);
      for (const k of ['connectionTimeout', 'greetingTimeout', 'socketTimeout']) {
        if (!url.searchParams.has(k)) {
          url.searchParams.set(k, String(this.o.timeoutMs));
        }
      }
      this.mailer = nodemailer.createTransport(url.toString());
    }
    return this.mailer;
  }

  /** The keys that sign a webhook to `target` (domain/webhook-signing.ts decides which). */
  private async signingKeys(orgId: string, target: DeliveryTarget): Promise<string[]> {
    const now = this.o.clock();
    const secret = this.o.webhookSecret;
    const orgKey =
      signingKeySource(target, secret) === 'organization'
        ? await orgSigningKey({ db: this.o.db, org: { id: orgId }, now })
        : undefined;
    return signingKeysFor(target, secret, orgKey, now);
  }

  private async send(row: OutboxRow, target: DeliveryTarget): Promise<void> {
    const event = row.payload as unknown as NotificationEvent;
    const timeout = this.o.timeoutMs;
    if (target.type === 'EMAIL') {
      const mail = emailMessage(event);
      await withDeadline(
        this.transport().sendMail({
          from: this.o.emailFrom,
          to: target.emails ?? [],
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
        }),
        timeout,
        () => new Error(`the SMTP server did not take the message within ${timeout} ms`),
      );
      return;
    }
    if (!target.webhook) {
      throw new RefusedError('target has no URL');
    }
    if (target.type === 'SLACK') {
      const slack = JSON.stringify(slackMessage(event));
      await postJson(target.webhook, slack, {}, this.o.allow, timeout, undefined, this.o.outboundCa);
      return;
    }
    const body = JSON.stringify(webhookPayload(event));
    const timestamp = String(Math.floor(this.o.clock().getTime() / 1000));
    const headers: Record<string, string> = {
      [TIMESTAMP_HEADER]: timestamp,
      'x-verity-event': event.trigger,
      [SIGNATURE_HEADER]: signWebhook(await this.signingKeys(row.org_id, target), timestamp, body),
    };
    await postJson(target.webhook, body, headers, this.o.allow, timeout, undefined, this.o.outboundCa);
  }

  /**
   * Claims due rows for the free slots and starts delivering them; returns how many it started
   * without waiting for them. An organization at its share of the slots is skipped.
   */
  async dispatch(): Promise<number> {
    let started = 0;
    for (;;) {
      const free = this.capacity - this.inFlight.size;
      if (free <= 0) {
        return started;
      }
      const loads = [...this.perOrg];
      const skip = loads.filter(([, n]) => n >= this.perOrgCap).map(([org]) => org);
      const busiest = Math.max(0, ...loads.filter(([, n]) => n < this.perOrgCap).map(([, n]) => n));
      // No organization can go over its share, whichever rows the claim returns.
      const limit = Math.min(free, this.perOrgCap - busiest);
      const rows = await outboxRepository.claim(
        this.o.db,
        this.o.clock(),
        // Outlives the delivery's deadline, so no other replica takes a row still in flight.
        Math.max(this.o.leaseMs ?? 60_000, this.o.timeoutMs + 1_000),
        limit,
        skip,
      );
      for (const row of rows) {
        this.start(row);
      }
      started += rows.length;
      if (rows.length < limit) {
        return started;
      }
    }
  }

  private start(row: OutboxRow): void {
    this.perOrg.set(row.org_id, (this.perOrg.get(row.org_id) ?? 0) + 1);
    const done = this.deliver(row)
      .catch((err: unknown) => this.o.log.error({ err, outbox: row.id }, 'notification bookkeeping failed'))
      .finally(() => {
        this.inFlight.delete(row.id);
        const n = (this.perOrg.get(row.org_id) ?? 1) - 1;
        if (n > 0) {
          this.perOrg.set(row.org_id, n);
        } else {
          this.perOrg.delete(row.org_id);
        }
        this.settled?.();
      });
    this.inFlight.set(row.id, done);
  }

  /**
   * The row's target, as its source keeps it: an action's or a notification config's target
   * (undefined when it went away since the event), or the derived recipients on the row itself.
   */
  private async destination(row: OutboxRow): Promise<Destination | undefined> {
    const { db } = this.o;
    const { org_id: orgId, action_id: owner, target_id: targetId } = row;
    if (row.source === 'notification_default') {
      const t = row.target;
      const target = { type: t.type, webhook: t.webhook ?? null, emails: t.emails ?? null, secret: null };
      return { target, record: async () => undefined };
    }
    if (!targetId) {
      return undefined;
    }
    if (row.source === 'notification_config') {
      const target = await notificationConfigsRepository.findTarget(db, orgId, owner, targetId);
      return target
        ? {
            target: { ...target, secret: null },
            record: (r) => notificationConfigsRepository.recordDelivery(db, orgId, owner, targetId, r),
          }
        : undefined;
    }
    const target = await actionsRepository.findTarget(db, orgId, owner, targetId);
    return target
      ? { target, record: (r) => actionsRepository.recordDelivery(db, orgId, owner, targetId, r) }
      : undefined;
  }

  private async deliver(row: OutboxRow): Promise<void> {
    const destination = await this.destination(row);
    if (!destination) {
      // The targets changed (or the action or config went) since the event: nothing to send to.
      await outboxRepository.drop(this.o.db, row);
      return;
    }
    const { target } = destination;
    try {
      await this.send(row, target);
      const at = this.o.clock();
      await outboxRepository.markDelivered(this.o.db, row, at);
      await destination.record({ ok: true, at });
      this.o.onResult?.(target.type, 'success');
    } catch (err) {
      const at = this.o.clock();
      const refused = err instanceof RefusedError;
      const message = (err as Error).message;
      const last = refused || row.attempts >= this.o.maxAttempts;
      const retryAt = last
        ? null
        : new Date(at.getTime() + retryDelayMs(row.attempts, (this.o.random ?? Math.random)()));
      await outboxRepository.markFailed(this.o.db, row, message, retryAt, at);
      await destination.record({ ok: false, at, error: message });
      this.o.onResult?.(target.type, refused ? 'refused' : 'failure');
      this.o.log.warn(
        { outbox: row.id, attempts: row.attempts, err: message, final: last },
        'notification delivery failed',
      );
    }
  }

  /** Delivers due rows until none is left and none is in flight (tests, and after a kick). */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.dispatch();
      total += n;
      if (this.inFlight.size === 0 && n === 0) {
        return total;
      }
      if (this.inFlight.size > 0) {
        await Promise.race(this.inFlight.values());
      }
    }
  }

  /** Waits for the deliveries in flight (each bounded by its deadline), then releases SMTP. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight.values()]);
    this.mailer?.close();
  }
}
