import type { z } from 'zod';
import type {
  dashboardDetails,
  dashboardSchemaView,
  dashboardView,
  listDashboardsOutput,
} from '../../../routers/dashboards/schemas';
import { ok, type Rest } from '../../support/rest';
import { uniq } from '../../support/factories';

// Answers of the dashboard operations, as the router's zod outputs describe them.
export type DashboardView = z.output<typeof dashboardView>;
export type DashboardDetails = z.output<typeof dashboardDetails>;
export type DashboardPage = z.output<typeof listDashboardsOutput>;
export type DashboardSchema = z.output<typeof dashboardSchemaView>;

/** A dashboard made through POST /api/dashboard by `token`. */
export async function postDashboard(
  api: Rest,
  token: string | undefined,
  workspaceId: number,
  over: Record<string, unknown> = {},
): Promise<DashboardView> {
  return ok<DashboardView>(
    await api.post('/api/dashboard', { name: uniq('dash'), workspace_id: workspaceId, ...over }, token),
  );
}
