import type { z } from 'zod';
import type {
  dashboardDetails,
  dashboardSchemaView,
  dashboardView,
  listDashboardsOutput,
} from '../../../routers/dashboards/schemas';
import type { widgetView } from '../../../routers/widgets/schemas';
import { ok, type Rest, type RestResponse } from '../../support/rest';
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

/** The widget a POST /api/widget answered with. */
export const widgetDetailsOf = (res: RestResponse) => ok<z.output<typeof widgetView>>(res);
