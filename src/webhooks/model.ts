import { EVENT_TYPES } from '../events/types.ts';
import type { DbBool, DbInt } from '../db/rows.ts';

/** The event names a webhook may list: the types of SPEC §6, or `*` for all of them. */
export const WEBHOOK_EVENTS = [...EVENT_TYPES, '*'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The event types only an organization webhook may list (SPEC §5.4). */
export const ORG_ONLY_EVENTS = ['repository', 'import'] as const;

/** How a webhook's deliveries name their headers: Wharf's own, or GitHub's names beside them (SPEC §5.2). */
export const HEADER_STYLES = ['wharf', 'github'] as const;
export type HeaderStyle = (typeof HEADER_STYLES)[number];

/** At most this many webhooks per repository (SPEC §5.2). */
export const MAX_WEBHOOKS_PER_REPOSITORY = 20;

/** At most this many webhooks per organization (SPEC §5.4). */
export const MAX_WEBHOOKS_PER_ORG = 20;

/** A webhook row, parsed. `secret` stays inside the server: presenters never copy it. */
export interface Webhook {
  id: number;
  /** The repository of a repository webhook; null for an organization webhook. */
  repository_id: number | null;
  /** The organization of an organization webhook; null for a repository webhook. */
  org_id: number | null;
  url: string;
  content_type: 'json';
  secret: string;
  events: WebhookEvent[];
  active: boolean;
  branch_filter: string | null;
  header_style: HeaderStyle;
  /** The names of its custom headers (their values stay sealed in the row, never read here). */
  header_names: string[];
  /** Deliveries per second at most (SPEC §5.2), or null: not paced. */
  max_rate: number | null;
  /** Attempts in flight at most, across all nodes (SPEC §5.2), or null: no cap beyond the fair share. */
  max_concurrency: number | null;
  /** Endpoint health (SPEC §5.5). */
  health: WebhookHealth;
  created_at: number;
  updated_at: number;
}

/** Endpoint health states (SPEC §5.5). */
export const HEALTH_STATES = ['healthy', 'paused', 'disabled'] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

/** A webhook's health as stored: its state, since when and why, and while paused when the next probe goes. */
export interface WebhookHealth {
  state: HealthState;
  since: number | null;
  reason: string | null;
  nextProbeAt: number | null;
}

/** A `webhooks` row as either driver gives it. */
interface WebhookRow {
  id: number;
  repository_id: number | null;
  org_id?: number | null;
  url: string;
  secret: string;
  /** JSON: the event names. */
  events: string;
  active: DbBool;
  branch_filter: string | null;
  header_style: string;
  /** JSON: the custom headers' names. */
  header_names: string;
  max_rate?: number | null;
  max_concurrency?: number | null;
  health_state?: string;
  health_since?: DbInt | null;
  health_reason?: string | null;
  probe_at?: DbInt | null;
  created_at: DbInt;
  updated_at: DbInt;
}

/** Parses a `webhooks` row from either dialect (booleans, bigints and JSON text differ). */
export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: Number(row.id),
    repository_id: row.repository_id === null ? null : Number(row.repository_id),
    org_id: row.org_id === null || row.org_id === undefined ? null : Number(row.org_id),
    url: row.url,
    content_type: 'json',
    secret: row.secret,
    events: JSON.parse(row.events),
    active: Boolean(row.active),
    branch_filter: row.branch_filter ?? null,
    header_style: row.header_style === 'github' ? 'github' : 'wharf',
    header_names: JSON.parse(row.header_names ?? '[]'),
    max_rate: row.max_rate == null ? null : Number(row.max_rate),
    max_concurrency: row.max_concurrency == null ? null : Number(row.max_concurrency),
    health: {
      state: (HEALTH_STATES as readonly string[]).includes(row.health_state ?? '') ? (row.health_state as HealthState) : 'healthy',
      since: row.health_since == null ? null : Number(row.health_since),
      reason: row.health_reason ?? null,
      nextProbeAt: row.health_state === 'paused' && row.probe_at != null ? Number(row.probe_at) : null,
    },
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

/** Delivery states; `pending` covers both waiting and in flight. */
export type DeliveryStatus = 'pending' | 'success' | 'failed';
