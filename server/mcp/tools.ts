import type { z } from 'zod';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { dashboardData } from '../dashboards/data';
import { listDashboards } from '../dashboards/dashboards';
import { listDataSources } from '../data-sources/data-sources';
import { datasetPreview } from '../datasets/data';
import { getDataset, listDatasets } from '../datasets/datasets';
import { widgetData } from '../widgets/data';
import { listWidgets } from '../widgets/widgets';
import { listWorkspaces } from '../workspaces/workspaces';
import { runReadOnlySql } from './sql-query';

/*
 * The tools of the MCP server (/mcp). Each calls the service function its REST path calls, with the API token's
 * owner as the actor: the one access policy, RLS and CLS apply exactly as over REST, and every data tool reads
 * through query/read.ts (widget data, dashboard data, dataset preview). Nothing here writes.
 *
 * The arguments' schemas are not here: routers/mcp/schemas.ts builds them from the REST inputs' pieces (server/
 * never imports routers/), so a tool argument is held to the rules of the REST field it stands for. McpToolArgs is
 * what each tool takes once they have parsed it; McpToolInputs makes the schemas answer exactly that.
 */

interface ListArgs {
  page: number;
  size: number;
  query?: string;
  workspace_id?: number;
}

export interface McpToolArgs {
  list_workspaces: ListArgs;
  list_data_sources: ListArgs;
  list_datasets: ListArgs;
  get_dataset: { dataset_id: number };
  list_widgets: ListArgs & { dataset_id?: number };
  list_dashboards: ListArgs;
  read_widget_data: { widget_id: number; page: number; page_size: number };
  read_dashboard_data: { dashboard_id: number; widget_ids: number[] };
  preview_dataset: { dataset_id: number; limit: number };
  run_sql: { data_source_id: number; sql: string; limit: number };
}
type McpToolName = keyof McpToolArgs;

/** The argument schema of every tool, parsing to what the tool takes. */
export type McpToolInputs = { [K in McpToolName]: z.ZodType<McpToolArgs[K]> };

interface McpTool<K extends McpToolName> {
  description: string;
  run(deps: AppDeps, actor: Actor, args: McpToolArgs[K]): Promise<unknown>;
}

const stdFilter = (a: ListArgs) => ({ page: a.page, size: a.size, query: a.query, workspaceId: a.workspace_id });

export const MCP_TOOLS: { [K in McpToolName]: McpTool<K> } = {
  list_workspaces: {
    description: 'Рабочие пространства, доступные владельцу токена',
    run: (deps, actor, a) => listWorkspaces(deps.db, actor, { page: a.page, size: a.size, query: a.query }),
  },
  list_data_sources: {
    description: 'Источники данных, которые владелец токена может читать',
    run: (deps, actor, a) => listDataSources(deps, actor, stdFilter(a)),
  },
  list_datasets: {
    description: 'Датасеты, которые владелец токена может читать',
    run: (deps, actor, a) => listDatasets(deps.db, actor, stdFilter(a)),
  },
  get_dataset: {
    description: 'Датасет со всей схемой: объекты, поля, связи, параметры',
    run: (deps, actor, a) => getDataset(deps.db, actor, a.dataset_id),
  },
  list_widgets: {
    description: 'Виджеты, которые владелец токена может читать',
    run: (deps, actor, a) => listWidgets(deps.db, actor, { ...stdFilter(a), datasetId: a.dataset_id }),
  },
  list_dashboards: {
    description: 'Дашборды, которые владелец токена может читать',
    run: (deps, actor, a) => listDashboards(deps, actor, stdFilter(a)),
  },
  read_widget_data: {
    description: 'Данные сохранённого виджета (с правами, RLS и CLS владельца токена); страницы с 1',
    run: (deps, actor, a) => widgetData(deps, actor, a.widget_id, { page: a.page, page_size: a.page_size }),
  },
  read_dashboard_data: {
    description: 'Данные всех виджетов дашборда (или перечисленных) с сохранёнными значениями селекторов',
    run: (deps, actor, a) => dashboardData(deps, actor, a.dashboard_id, { widget_ids: a.widget_ids, filters: [] }),
  },
  preview_dataset: {
    description: 'Первые строки датасета (с правами, RLS и CLS владельца токена)',
    run: (deps, actor, a) => datasetPreview(deps, actor, a.dataset_id, { limit: a.limit }),
  },
  run_sql: {
    description:
      'Запрос SQL на чтение к источнику (только владелец источника; одна команда SELECT, транзакция только для чтения)',
    run: (deps, actor, a) => runReadOnlySql(deps, actor, a),
  },
};
