import { z } from 'zod';
import type { MailingInput } from '../../server/mailings/mailings';
import type { LetterView, MailingView, RunView } from '../../server/mailings/views';
import {
  dateFromParam,
  dateToParam,
  entityId,
  nonBlank,
  pagedQuery,
  pageSchema,
  stdListQuery,
  widgetFilter,
  wireString,
  type Mirrors,
} from '../common';
import { email } from '../mail-channels/schemas';

/* Wire shapes of mailings (/api/mailings ...). */

const id = entityId();
const format = z.enum(['pdf', 'png', 'xlsx', 'csv', 'inline']);
const status = z.enum(['active', 'paused']);

const slice = z.strictObject({
  dataset_id: id.describe('Dataset the slice values and recipients come from'),
  field_id: id.describe('One letter per distinct value of this field'),
  recipient_field_id: id.describe('Addresses each value goes to (several separated by commas)'),
});

const mailingBody = {
  name: nonBlank(255),
  workspace_id: id.optional().describe('Default: the personal workspace'),
  dashboard_id: id.nullable().optional(),
  widget_ids: z.array(id).max(100).default([]),
  format: format.describe('pdf, png, xlsx, csv, or inline (images in the HTML body)'),
  schedule: wireString().max(200).nullable().default(null).describe('Cron, five fields; null: run on demand only'),
  timezone: wireString().max(64).default('UTC').describe('IANA time zone of the schedule'),
  status: status.default('active'),
  channel_id: id,
  recipients: z
    .strictObject({
      user_ids: z.array(id).max(1000).default([]),
      group_ids: z.array(id).max(1000).default([]),
      emails: z.array(email()).max(1000).default([]),
    })
    .default({ user_ids: [], group_ids: [], emails: [] }),
  subject: wireString().max(998).default('').describe('{{slice}} stands for the slice value'),
  body: wireString().max(100_000).default(''),
  slice: slice.nullable().default(null),
};

export const mailingInput = z.strictObject(mailingBody);
export const mailingUpdate = z.strictObject({ id, ...mailingBody });

export const mailingOutput = z.object({
  id: z.number().int(),
  name: z.string(),
  workspace_id: z.number().int(),
  author_id: z.number().int().nullable(),
  dashboard_id: z.number().int().nullable(),
  widget_ids: z.array(z.number().int()),
  format,
  schedule: z.string().nullable(),
  timezone: z.string(),
  status,
  channel_id: z.number().int(),
  recipients: z.object({
    user_ids: z.array(z.number().int()),
    group_ids: z.array(z.number().int()),
    emails: z.array(z.string()),
  }),
  subject: z.string(),
  body: z.string(),
  slice: z.object({ dataset_id: z.number(), field_id: z.number(), recipient_field_id: z.number() }).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export const mailingPage = pageSchema(mailingOutput);

export const listInput = z.strictObject({
  ...stdListQuery(['id'], z.string().max(50)),
  status: status.optional(),
});

export const runOutput = z.object({
  run_id: z.number().int(),
  mailing_id: z.number().int(),
  state: z.enum(['queued', 'running', 'succeeded', 'failed']),
  trigger: z.enum(['manual', 'schedule']),
  letters_sent: z.number().int(),
  letters_failed: z.number().int(),
  error: z.string().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export const runPage = pageSchema(runOutput);
export const runStarted = z.object({ run_id: z.number().int() });

const letterOutput = z.object({
  id: z.number().int(),
  recipient: z.string(),
  slice_value: z.string().nullable(),
  status: z.enum(['pending', 'sending', 'sent', 'failed', 'unconfirmed']),
  error: z.string().nullable(),
  attempts: z.number().int(),
  sent_at: z.string().nullable(),
});
export const letterPage = pageSchema(letterOutput);

export const runsInput = z.strictObject({
  id,
  ...pagedQuery,
  createdAtFrom: dateFromParam.optional(),
  createdAtTo: dateToParam.optional(),
});
export const runRef = z.strictObject({ id, runId: id.describe('Run id') });
export const lettersInput = z.strictObject({ id, runId: id.describe('Run id'), ...pagedQuery });

export const estimateInput = z.strictObject({
  ...slice.shape,
  filters: z.array(widgetFilter).max(100).default([]),
});
export const estimateOutput = z.object({
  slice_count: z.number().int(),
  letter_count: z.number().int(),
  sample_values: z.array(z.string()),
});

export const testInput = z.strictObject({
  id,
  emails: z.array(email()).min(1).max(50).optional().describe('Default: the caller'),
});
export const testOutput = z.object({ ok: z.literal(true), recipients: z.array(z.string()) });

const _in: Mirrors<MailingInput, z.output<typeof mailingInput>> = true;
const _out: Mirrors<MailingView, z.output<typeof mailingOutput>> = true;
const _run: Mirrors<RunView, z.output<typeof runOutput>> = true;
const _letter: Mirrors<LetterView, z.output<typeof letterOutput>> = true;
void [_in, _out, _run, _letter];
