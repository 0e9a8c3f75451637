import { router } from './trpc';
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
import { etlRouter } from './etl/router';
import { fileExportRouter } from './file-export/router';
import { notificationRouter } from './notifications/router';
import { ssoRouter } from './sso/router';
import { ssoProviderRouter } from './sso/provider-router';
import { shareLinkRouter } from './share-links/router';
import { publicLinkRouter } from './public-link/router';
import { pipelineRouter } from './pipelines/router';
import { aiRouter } from './ai/router';
import { mailChannelRouter } from './mail-channels/router';
import { mailingRouter } from './mailings/router';
import { rollupRouter } from './rollups/router';
import { revisionRouter } from './revisions/router';

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
  etl: etlRouter,
  fileExport: fileExportRouter,
  notification: notificationRouter,
  sso: ssoRouter,
  ssoProvider: ssoProviderRouter,
  shareLink: shareLinkRouter,
  publicLink: publicLinkRouter,
  pipeline: pipelineRouter,
  ai: aiRouter,
  mailChannel: mailChannelRouter,
  mailing: mailingRouter,
  rollup: rollupRouter,
  revision: revisionRouter,
});

export type AppRouter = typeof appRouter;
