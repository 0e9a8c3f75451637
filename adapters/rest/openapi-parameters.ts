/**
 * Descriptions of query and path parameters: the per-operation override, else the parameter's own zod description
 * (the most specific), else the shared dictionary by name. `{id}` names the resource of the path
 * segment just before it. A parameter none of these cover stays undescribed and fails the completeness check.
 */

/** The spec's list query set and the other names that mean the same thing wherever they appear. */
const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  page: 'Page number, from 0',
  size: 'Page size',
  sort: '`<field>,<asc or desc>`',
  query: 'Case-insensitive search in the name',
  author: 'Only objects created by this user id',
  workspaceId: 'Only objects of this workspace',
  createdAtFrom: 'Created at or after: an ISO 8601 date-time (a plain date means its start, UTC)',
  createdAtTo: 'Created at or before: an ISO 8601 date-time (a plain date includes the whole day, UTC)',
  updatedAtFrom: 'Updated at or after: an ISO 8601 date-time (a plain date means its start, UTC)',
  updatedAtTo: 'Updated at or before: an ISO 8601 date-time (a plain date includes the whole day, UTC)',
  userId: 'User id',
  groupId: 'Group id',
  objectType: 'Kind of object: data-source, dataset, widget or dashboard',
  objectId: 'Id of the object',
  viewAsUserId: 'API only, system administrator only: answer as this user sees the data (their rights, RLS and CLS)',
  memberId: 'Membership id (member_id of the members list)',
  queryId: 'Query id (query_id from running the query)',
  fieldId: 'Field id of the dataset',
  datasetId: 'Dataset id',
  ruleId: 'Rule id of the dataset (an RLS or CLS rule)',
  active: 'Only active (true) or only deactivated (false) accounts',
  memberOnly: 'Only workspaces the caller is a member of',
  schema: 'Database schema name',
  table: 'Table or view name',
  column: 'Column name',
  limit: 'Largest number of items to return',
  action: 'Only entries of this action',
  jobId: 'Export job id (job_id from POST /api/exports)',
  against: 'Revision number to compare with (default: the current revision)',
  deploymentId: 'Deployment id (from GET /api/pipeline/{id}/deployments)',
  details: 'true: each changed object also lists the paths changed since its last deploy',
};

/** Where a name means something else on one operation: `METHOD /path` -> name -> description. */
export const PARAMETER_OVERRIDES: Record<string, Record<string, string>> = {
  'GET /api/mcp-tokens': { userId: "System administrator only: list this user's tokens instead of one's own" },
  'GET /api/data-source/{id}/access-log': { userId: 'Only entries of this user' },
  'GET /api/data-source/{id}/queries/{queryId}': { page: 'Result page number, from 0', size: 'Rows per result page' },
  'GET /api/workspaces': { type: 'Only personal workspaces, or only shared ones («Общее»)' },
  'GET /api/source-types/{type}': { type: 'Source kind' },
  'PUT /api/source-types/{type}': { type: 'Source kind' },
  'GET /api/mailings': {
    type: 'Std list parameter; mailings have no kind, so it is accepted and has no effect',
    status: 'Only active mailings, or only paused ones',
  },
};

/** `/api/<segment>/{id}`: what the id is the id of. */
const PATH_RESOURCES: Record<string, string> = {
  'data-source': 'Data source id',
  dataset: 'Dataset id',
  widget: 'Widget id',
  dashboard: 'Dashboard id',
  pipeline: 'Pipeline id',
  users: 'User id',
  groups: 'Group id',
  workspaces: 'Workspace id',
  'mcp-tokens': 'API token id',
  files: 'File source id',
  datasets: 'Dataset id',
  drivers: 'Connector plugin id',
  'mail-channels': 'Mail channel id',
  mailings: 'Mailing id',
  notifications: 'Notification id',
};

export function describeParameter(
  opKey: string,
  path: string,
  name: string,
  location: string,
  own?: string,
): string | undefined {
  const override = PARAMETER_OVERRIDES[opKey]?.[name];
  if (override) return override;
  if (own) return own;
  if (location === 'path' && name === 'id') {
    const segments = path.split('/');
    const segment = segments[segments.indexOf('{id}') - 1];
    return segment === undefined ? undefined : PATH_RESOURCES[segment];
  }
  return PARAMETER_DESCRIPTIONS[name];
}
