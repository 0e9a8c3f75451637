import { z } from 'zod';
import { jobKind } from '../jobs/jobs';

/*
 * The pg-boss job kinds of extracts, named apart from their handlers (server/etl/run-job.ts): whoever queues,
 * cancels or waits for a run needs only the name.
 */

export const EXTRACT_RUN = jobKind('extract-run', z.object({ runId: z.number().int().positive() }));
export const EXTRACT_SCHEDULE = jobKind('extract-schedule', z.object({ datasetId: z.number().int().positive() }));
