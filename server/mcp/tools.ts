import { z } from 'zod';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { dashboardData } from '../dashboards/data';
import { listDashboards } from '../dashboards/dashboards';
import { listDataSources } from '../data-sources/data-sources';
import { datasetPreview } from '../datasets/data-reads';
import { getDataset, listDatasets } from '../datasets/datasets';
import { widgetData } from '../widgets/widget-data';
import { listWidgets } from '../widgets/widgets';
import { listWorkspaces } from '../workspaces/workspaces';
import { MAX_SQL_ROWS, runReadOnlySql } from './sql-query';

/*
 * The tools of the MCP server (/mcp). Each calls the service function its REST path calls, with the API token's
 * owner as the actor: the one access policy, RLS and CLS apply exactly as over REST, and every data tool reads
 * through query/read.ts (widget data, dashboard data, dataset preview). Nothing here writes.
 */

const id = z.number().int().min(1).max(2_147_483_647);
const listArgs = {
  page: z.number().int().min(0).max(1_000_000).default(0).describe('Page from 0'),
  size: z.number().int().min(1).max(200).default(50),
  query: z.string().max(200).optional().describe('Name search'),
  workspace_id: id.optional(),
};
type ListArgs = { page: number; size: number; query?: string; workspace_id?: number };
const stdFilter = (a: ListArgs) => ({ page: a.page, size: a.size, query: a.query, workspaceId: a.workspace_id });

export interface McpTool {
  name: string;
  description: string;
  input: z.ZodRawShape;
  run(deps: AppDeps, actor: Actor, args: Record<string, unknown>): Promise<unknown>;
}

const tool = <S extends z.ZodRawShape>(
  name: string,
  description: string,
  input: S,
  run: (deps: AppDeps, actor: Actor, args: z.output<z.ZodObject<S>>) => Promise<unknown>,
): McpTool => ({ name, description, input, run: run as McpTool['run'] });

export const MCP_TOOLS: McpTool[] = [
  tool('list_workspaces', 'Рабочие пространства, доступные владельцу токена', listArgs, (deps, actor, a) =>
    listWorkspaces(deps.db, actor, { page: a.page, size: a.size, query: a.query }),
  ),
  tool('list_data_sources', 'Источники данных, которые владелец токена может читать', listArgs, (deps, actor, a) =>
    listDataSources(deps, actor, stdFilter(a)),
  ),
  tool('list_datasets', 'Датасеты, которые владелец токена может читать', listArgs, (deps, actor, a) =>
    listDatasets(deps.db, actor, stdFilter(a)),
  ),
  tool('get_dataset', 'Датасет со всей схемой: объекты, поля, связи, параметры', { dataset_id: id }, (deps, actor, a) =>
    getDataset(deps.db, actor, a.dataset_id),
  ),
  tool(
    'list_widgets',
    'Виджеты, которые владелец токена может читать',
    { ...listArgs, dataset_id: id.optional() },
    (deps, actor, a) => listWidgets(deps.db, actor, { ...stdFilter(a), datasetId: a.dataset_id }),
  ),
  tool('list_dashboards', 'Дашборды, которые владелец токена может читать', listArgs, (deps, actor, a) =>
    listDashboards(deps, actor, stdFilter(a)),
  ),
  tool(
    'read_widget_data',
    'Данные сохранённого виджета (с правами, RLS и CLS владельца токена); страницы с 1',
    {
      widget_id: id,
      page: z.number().int().min(1).default(1),
      page_size: z.number().int().min(1).max(1000).default(100),
    },
    (deps, actor, a) => widgetData(deps, actor, a.widget_id, { page: a.page, page_size: a.page_size }),
  ),
  tool(
    'read_dashboard_data',
    'Данные всех виджетов дашборда (или перечисленных) с сохранёнными значениями селекторов',
    { dashboard_id: id, widget_ids: z.array(id).max(200).default([]) },
    (deps, actor, a) => dashboardData(deps, actor, a.dashboard_id, { widget_ids: a.widget_ids, filters: [] }),
  ),
  tool(
    'preview_dataset',
    'Первые строки датасета (с правами, RLS и CLS владельца токена)',
    { dataset_id: id, limit: z.number().int().min(1).max(1000).default(100) },
    (deps, actor, a) => datasetPreview(deps, actor, a.dataset_id, { limit: a.limit }),
  ),
  tool(
    'run_sql',
    'Запрос SQL на чтение к источнику (только владелец источника; одна команда SELECT, транзакция только для чтения)',
    {
      data_source_id: id,
      sql: z.string().min(1).max(100_000),
      limit: z.number().int().min(1).max(MAX_SQL_ROWS).default(100),
    },
    (deps, actor, a) => runReadOnlySql(deps, actor, a),
  ),
];
