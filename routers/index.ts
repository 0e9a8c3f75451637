import { router } from '../server/app/trpc';
import { adminRouter } from './admin/router';
import { authRouter } from './auth/router';
import { dataSourceRouter } from './data-sources/router';
import { datasetRouter } from './datasets/router';
import { groupRouter } from './groups/router';
import { mcpTokenRouter } from './mcp-tokens/router';
import { serviceRouter } from './service/router';
import { userRouter } from './users/router';
import { workspaceRouter } from './workspaces/router';
import { widgetRouter } from './widgets/router';
import { dashboardRouter } from './dashboards/router';
import { accessRouter } from './access/router';

export const appRouter = router({
  auth: authRouter,
  mcpToken: mcpTokenRouter,
  service: serviceRouter,
  user: userRouter,
  group: groupRouter,
  workspace: workspaceRouter,
  dataSource: dataSourceRouter,
  admin: adminRouter,
  dataset: datasetRouter,
  widget: widgetRouter,
  dashboard: dashboardRouter,
  access: accessRouter,
});

export type AppRouter = typeof appRouter;
