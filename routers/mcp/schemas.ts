import { z } from 'zod';
import type { McpToolInputs } from '../../server/mcp/tools';
import { MAX_SQL_ROWS } from '../../server/mcp/sql-query';
import { entityId, wireString } from '../common';
import { listDashboardsInput } from '../dashboards/schemas';
import { listDataSourcesInput } from '../data-sources/schemas';
import { listDatasetsInput } from '../datasets/schemas';
import { listWidgetsInput, widgetDataInput } from '../widgets/schemas';
import { listWorkspacesInput } from '../workspaces/schemas';

/*
 * The arguments of the MCP tools (server/mcp/tools.ts). A field a REST input has too is that input's own schema
 * (text without NUL or lone surrogates and of the same length, the same page cap), so an argument the database
 * cannot take is refused by the SDK as a tool error naming it, not a 500. The bounds of MCP's own (list page and
 * size, widget_ids, SQL length and rows) are no looser than REST's: the answers go to an assistant's context.
 */

const id = entityId();

const listArgs = (query: z.ZodType<string | undefined>) =>
  z.object({
    page: z.number().int().min(0).max(1_000_000).default(0).describe('Page from 0'),
    size: z.number().int().min(1).max(200).default(50),
    query,
    workspace_id: id.optional(),
  });

export const mcpToolInputs: McpToolInputs = {
  list_workspaces: listArgs(listWorkspacesInput.shape.query),
  list_data_sources: listArgs(listDataSourcesInput.shape.query),
  list_datasets: listArgs(listDatasetsInput.shape.query),
  get_dataset: z.object({ dataset_id: id }),
  list_widgets: listArgs(listWidgetsInput.shape.query).extend({ dataset_id: id.optional() }),
  list_dashboards: listArgs(listDashboardsInput.shape.query),
  read_widget_data: z.object({
    widget_id: id,
    page: widgetDataInput.shape.page,
    page_size: widgetDataInput.shape.page_size.unwrap().default(100),
  }),
  read_dashboard_data: z.object({ dashboard_id: id, widget_ids: z.array(id).max(200).default([]) }),
  preview_dataset: z.object({ dataset_id: id, limit: z.number().int().min(1).max(1000).default(100) }),
  run_sql: z.object({
    data_source_id: id,
    // The REST console's rule (POST /api/data-source/{id}/queries), at a tenth of its length.
    sql: wireString().trim().min(1).max(100_000),
    limit: z.number().int().min(1).max(MAX_SQL_ROWS).default(100),
  }),
};
