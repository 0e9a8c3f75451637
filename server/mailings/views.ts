import type { LetterRow, MailingRow, MailingRunRow } from './store';

/* Mailings, runs and letters as the wire shows them. */

export type MailingFormat = 'pdf' | 'png' | 'xlsx' | 'csv' | 'inline';

export interface MailingView {
  id: number;
  name: string;
  workspace_id: number;
  author_id: number | null;
  dashboard_id: number | null;
  widget_ids: number[];
  format: MailingFormat;
  schedule: string | null;
  timezone: string;
  status: 'active' | 'paused';
  channel_id: number;
  recipients: { user_ids: number[]; group_ids: number[]; emails: string[] };
  subject: string;
  body: string;
  slice: { dataset_id: number; field_id: number; recipient_field_id: number } | null;
  created_at: string;
  updated_at: string;
}

export function mailingView(row: MailingRow): MailingView {
  return {
    id: row.id,
    name: row.name,
    workspace_id: row.workspaceId,
    author_id: row.authorId,
    dashboard_id: row.dashboardId,
    widget_ids: row.widgetIds,
    format: row.format as MailingFormat,
    schedule: row.schedule,
    timezone: row.timezone,
    status: row.status as 'active' | 'paused',
    channel_id: row.channelId,
    recipients: row.recipients,
    subject: row.subject,
    body: row.body,
    slice: row.slice ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export interface RunView {
  run_id: number;
  mailing_id: number;
  state: 'queued' | 'running' | 'succeeded' | 'failed';
  trigger: 'manual' | 'schedule';
  letters_sent: number;
  letters_failed: number;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** `live`: the letters' own counts while the run runs; letters_failed counts those not confirmed sent. */
export function runView(row: MailingRunRow, live?: { sent: number; failed: number; unconfirmed: number }): RunView {
  return {
    run_id: row.id,
    mailing_id: row.mailingId,
    state: row.state as RunView['state'],
    trigger: row.trigger as RunView['trigger'],
    letters_sent: live?.sent ?? row.lettersSent,
    letters_failed: live ? live.failed + live.unconfirmed : row.lettersFailed,
    error: row.error,
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
  };
}

export interface LetterView {
  id: number;
  recipient: string;
  slice_value: string | null;
  /** unconfirmed: its node died during the SMTP call; it may or may not have left, and is not sent again. */
  status: 'pending' | 'sending' | 'sent' | 'failed' | 'unconfirmed';
  error: string | null;
  attempts: number;
  sent_at: string | null;
}

export function letterView(row: LetterRow): LetterView {
  return {
    id: row.id,
    recipient: row.recipient,
    slice_value: row.sliceValue === '' ? null : row.sliceValue,
    status: row.status as LetterView['status'],
    error: row.error,
    attempts: row.attempts,
    sent_at: row.sentAt?.toISOString() ?? null,
  };
}
