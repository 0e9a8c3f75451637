import { rm } from 'node:fs/promises';
import type { Attachment } from '../../adapters/mail/smtp';
import { readableObject } from '../access/object-access';
import type { Viewer } from '../access/viewer';
import type { AppDeps } from '../app/deps';
import { layoutOf, widgetIdsOf } from '../dashboards/layout';
import { produceExport, type ExportFilter, type ExportFormat } from '../file-export/produce';
import type { MailingRow } from './store';

/*
 * The content of a mailing's letter: its subject and body, and the files of its dashboard or widgets made by the
 * file-export area (server/file-export/produce.ts) with the rights of the mailing's owner. A sliced letter filters every
 * widget of the slice dataset to its slice value. The files are removed once the letter group is sent.
 */

export interface SliceFilter {
  key: string;
  datasetId: number;
  fieldRef: string;
  value: unknown;
}

export interface LetterContent {
  subject: string;
  text: string;
  html?: string;
  attachments: Attachment[];
  files: string[];
}

/** `{{slice}}` in the subject or body stands for the letter's slice value. */
const fill = (template: string, slice: string) => template.replaceAll('{{slice}}', slice);
const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export async function buildLetter(
  deps: AppDeps,
  viewer: Viewer,
  mailing: MailingRow,
  slice: SliceFilter | null,
  signal?: AbortSignal,
): Promise<LetterContent> {
  const sliceText = slice ? String(slice.key ?? slice.value) : '';
  const subject = fill(mailing.subject || mailing.name, sliceText);
  const text = fill(mailing.body, sliceText);
  const files: string[] = [];
  const attachments: Attachment[] = [];
  const inline = mailing.format === 'inline';
  const format: ExportFormat = inline ? 'png' : (mailing.format as ExportFormat);
  const images: string[] = [];
  try {
    for (const target of await targetsOf(deps, viewer, mailing, format)) {
      // A widget of the slice dataset is filtered to the slice value; a dashboard page filters those of its widgets.
      const filters: ExportFilter[] =
        slice && (target.datasetId === slice.datasetId || target.type === 'dashboard')
          ? [{ sql: slice.fieldRef, op: 'eq', values: [slice.value], dataset_id: slice.datasetId }]
          : [];
      const file = await produceExport(deps, {
        ownerUserId: viewer.actor.userId,
        objectType: target.type,
        objectId: target.id,
        format,
        filters,
        signal,
      });
      files.push(file.filePath);
      const cid = inline ? `image${images.length}@mailing` : undefined;
      if (cid) images.push(cid);
      attachments.push({ filename: file.fileName, path: file.filePath, contentType: file.contentType, cid });
    }
  } catch (e) {
    await dropFiles(files);
    throw e;
  }
  const html = inline
    ? `<p>${escapeHtml(text).replaceAll('\n', '<br>')}</p>${images.map((c) => `<p><img src="cid:${c}"></p>`).join('')}`
    : undefined;
  return { subject, text, html, attachments, files };
}

export async function dropFiles(files: string[]): Promise<void> {
  await Promise.all(files.map((f) => rm(f, { force: true })));
}

interface Target {
  type: 'widget' | 'dashboard';
  id: number;
  datasetId: number | null;
}

/**
 * What is exported: the widgets, or the dashboard as a page (pdf, png) or as its widgets' tables (csv, xlsx). Each is
 * found with the owner's rights: one the owner can no longer read fails the letter (404 message as its reason).
 */
async function targetsOf(deps: AppDeps, viewer: Viewer, m: MailingRow, format: ExportFormat): Promise<Target[]> {
  let widgetIds = m.widgetIds;
  if (m.dashboardId !== null) {
    const { row } = await readableObject(deps.db, viewer.actor, 'dashboard', m.dashboardId);
    if (format === 'pdf' || format === 'png') return [{ type: 'dashboard', id: row.id, datasetId: null }];
    widgetIds = widgetIdsOf(layoutOf(row.layout));
  }
  const out: Target[] = [];
  for (const id of widgetIds) {
    const { row } = await readableObject(deps.db, viewer.actor, 'widget', id);
    out.push({ type: 'widget', id, datasetId: row.datasetId });
  }
  return out;
}
