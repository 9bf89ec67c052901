/**
 * The notification worker: claims due outbox rows, delivers each to its target, records the
 * result on the row and the target, and retries failures with exponential backoff and jitter.
 * Delivery is at least once: a row is marked delivered only after its target accepted it.
 * A row whose target was replaced or removed is dropped, not sent.
 */
import { createHmac } from 'node:crypto';
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
import { activeSigningKeys, orgSigningKey } from '../usecases/webhook-signing.js';
import { postJson, RefusedError } from './outbound.js';

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
  maxAttempts: number;
  leaseMs?: number;
  batchSize?: number;
  random?: () => number;
  /** Called once per delivery attempt, for metrics. */
  onResult?: (targetType: string, result: 'success' | 'failure' | 'refused') => void;
}

/** Header names of a signed webhook. The signature is HMAC-SHA256 over `<timestamp>.<body>`. */
export const SIGNATURE_HEADER = 'x-verity-signature';
export const TIMESTAMP_HEADER = 'x-verity-timestamp';

/**
 * The signature header value for a body sent at `timestamp` (epoch seconds); with several keys
 * (during a key rotation) one `sha256=` signature per key, comma-separated.
 */
export function signWebhook(secret: string | readonly string[], timestamp: string, body: string): string {
  const keys = typeof secret === 'string' ? [secret] : secret;
  return keys
    .map((k) => `sha256=${createHmac('sha256', k).update(`${timestamp}.${body}`).digest('hex')}`)
    .join(',');
}

export class Notifier {
  private mailer: Transporter | undefined;

  constructor(private readonly o: NotifierOptions) {}

  private transport(): Transporter {
    if (!this.o.smtpUrl) throw new RefusedError('no SMTP server configured (SMTP_URL)');
    this.mailer ??= nodemailer.createTransport(this.o.smtpUrl);
    return this.mailer;
  }

  /** The keys that sign a webhook to `target`: its own, else the server-wide one, else the org's. */
  private async signingKeys(orgId: string, target: ActionTargetRow): Promise<string[]> {
    if (target.secret) return [target.secret];
    if (this.o.webhookSecret) return [this.o.webhookSecret];
    const now = this.o.clock();
    return activeSigningKeys(await orgSigningKey(this.o.db, orgId, now), now);
  }

  private async send(row: OutboxRow, target: ActionTargetRow): Promise<void> {
    const event = row.payload as unknown as NotificationEvent;
    const timeout = this.o.timeoutMs;
    if (target.type === 'EMAIL') {
      const mail = emailMessage(event);
      await this.transport().sendMail({
        from: this.o.emailFrom,
        to: target.emails ?? [],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      });
      return;
    }
    if (!target.webhook) throw new RefusedError('target has no URL');
    if (target.type === 'SLACK') {
      await postJson(target.webhook, JSON.stringify(slackMessage(event)), {}, this.o.allow, timeout);
      return;
    }
    const body = JSON.stringify(webhookPayload(event));
    const timestamp = String(Math.floor(this.o.clock().getTime() / 1000));
    const headers: Record<string, string> = {
      [TIMESTAMP_HEADER]: timestamp,
      'x-verity-event': event.trigger,
      [SIGNATURE_HEADER]: signWebhook(await this.signingKeys(row.org_id, target), timestamp, body),
    };
    await postJson(target.webhook, body, headers, this.o.allow, timeout);
  }

  /** Claims and delivers one batch; returns the rows attempted. */
  async runOnce(): Promise<number> {
    const now = this.o.clock();
    const rows = await outboxRepository.claim(
      this.o.db,
      now,
      this.o.leaseMs ?? 60_000,
      this.o.batchSize ?? 20,
    );
    await Promise.all(rows.map((row) => this.deliver(row)));
    return rows.length;
  }

  private async deliver(row: OutboxRow): Promise<void> {
    const target = row.target_id
      ? await actionsRepository.findTarget(this.o.db, row.org_id, row.action_id, row.target_id)
      : undefined;
    if (!target) {
      // The action's targets changed (or the action went) since the event: nothing to send to.
      await outboxRepository.drop(this.o.db, row);
      return;
    }
    try {
      await this.send(row, target);
      const at = this.o.clock();
      await outboxRepository.markDelivered(this.o.db, row, at);
      await actionsRepository.recordDelivery(this.o.db, row.org_id, row.action_id, target.id, {
        ok: true,
        at,
      });
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
      await actionsRepository.recordDelivery(this.o.db, row.org_id, row.action_id, target.id, {
        ok: false,
        at,
        error: message,
      });
      this.o.onResult?.(target.type, refused ? 'refused' : 'failure');
      this.o.log.warn(
        { outbox: row.id, attempts: row.attempts, err: message, final: last },
        'notification delivery failed',
      );
    }
  }

  /** Drains due rows until none is left (tests, and after a kick). */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.runOnce();
      total += n;
      if (n === 0) return total;
    }
  }

  /** Releases the SMTP connection pool. */
  close(): void {
    this.mailer?.close();
  }
}
