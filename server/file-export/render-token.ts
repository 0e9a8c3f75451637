import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { exportJobs, exportRenderTokens } from '../../db/schema/exports';
import { unauthorized } from '../kernel/errors';
import type { ExportJobRow } from './store';

/*
 * Render tokens of the internal render pages (/api/render/*, header X-Render-Token): random, kept only as a SHA-256,
 * bound to one export job and one object, living minutes, and only while the job runs: a token replayed after its job
 * ended, for another object, or on any other route is refused. Session and API tokens are never accepted there.
 */

const TTL_MS = 10 * 60_000;
export const RENDER_TOKEN_HEADER = 'x-render-token';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

export async function issueRenderToken(
  db: DbOrTx,
  job: { id: number; objectType: string; objectId: number },
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db.insert(exportRenderTokens).values({
    tokenHash: hashOf(token),
    jobId: job.id,
    objectType: job.objectType,
    objectId: job.objectId,
    expiresAt: new Date(Date.now() + TTL_MS),
  });
  return token;
}

export async function revokeRenderTokens(db: DbOrTx, jobId: number): Promise<void> {
  await db.delete(exportRenderTokens).where(eq(exportRenderTokens.jobId, jobId));
}

const refused = () => unauthorized('Недействительный токен рендеринга');

/** The running job a render token stands for; anything else (missing, expired, job ended) is a 401. */
export async function jobOfRenderToken(db: DbOrTx, token: string | undefined): Promise<ExportJobRow> {
  if (!token || token.length > 200) throw refused();
  const [found] = await db
    .select({ job: exportJobs })
    .from(exportRenderTokens)
    .innerJoin(exportJobs, eq(exportJobs.id, exportRenderTokens.jobId))
    .where(and(eq(exportRenderTokens.tokenHash, hashOf(token)), gt(exportRenderTokens.expiresAt, new Date())));
  if (!found || found.job.state !== 'running') throw refused();
  return found.job;
}
