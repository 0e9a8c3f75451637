/**
 * Operation descriptions, seeded from the catalogue's notes and access columns, keyed by `METHOD /path`. A
 * procedure's own `meta.openapi.description` (or a raw route's) wins; an operation with neither fails the
 * completeness check.
 */

const OWNER = 'Access: owner (the author, a user or group with the edit right, or Администратор of its workspace).';
const ANY = 'Access: any authenticated user.';
const SYSADMIN = 'Access: system administrator.';
const WS_ADMIN = 'Access: Администратор of the workspace.';
const PUBLIC = 'Access: public, no token.';
const STD_LIST =
  'A page of the std list: `data.content` and `data.page` {size, number, total_elements, total_pages}; filters by name ' +
  'search, author, workspace and creation or update time.';

export const OPERATION_DESCRIPTIONS: Record<string, string> = {
  'POST /api/auth/login': `Answers a session token (Bearer, 900 s) and a refresh token. Repeated failures for one username from one address are refused with 429 for a minute. ${PUBLIC}`,
  'POST /api/auth/refresh': `Exchanges a refresh token for a new session token and a new refresh token; the old refresh token stops working. ${PUBLIC}`,
  'POST /api/auth/logout': `No body. Revokes every refresh token of the caller; session tokens already issued run out on their own. ${ANY}`,

  'GET /api/mcp-tokens': `The caller's API tokens, paged; the token string itself is never returned. A system administrator may pass userId. ${ANY}`,
  'POST /api/mcp-tokens': `The token string (prefix apt_) is in the answer once and never again. Refused while the administrator has token issue turned off, or for an account type or group the settings do not allow. ${ANY}`,
  'DELETE /api/mcp-tokens/{id}': `Irreversible. A system administrator may revoke any token. ${OWNER}`,
  'POST /api/mcp-tokens/{id}/suspend': `The token is refused until it is activated again. ${OWNER}`,
  'POST /api/mcp-tokens/{id}/activate': `Resumes a suspended token. ${OWNER}`,
  'GET /api/mcp-tokens/settings': `Whether API tokens are on, which account types may issue them, and the group whose members may. ${ANY}`,
  'PUT /api/mcp-tokens/settings': `Turns API token issue and use on or off and sets who may issue them. ${SYSADMIN}`,

  'GET /api/settings': `Instance name, base URL, default locale, session token lifetime (read-only) and feature switches. ${ANY}`,
  'PUT /api/settings': `Changes the instance name, base URL, default locale and feature switches. ${SYSADMIN}`,
  'GET /api/dictionary': `Interface labels: pipeline statuses and stages, «Общее», workspace roles, widget and source kinds. ${ANY}`,

  'GET /api/users': `Paged; search by name, filter by group and by active. Callers other than a system administrator get id, username and full_name only. ${ANY}`,
  'POST /api/users': `Creates an account with its groups. ${SYSADMIN}`,
  'GET /api/users/me': `The caller: account, groups and personal workspace. ${ANY}`,
  'PUT /api/users/me/password': `Needs the old password; revokes the caller's refresh tokens. ${ANY}`,
  'GET /api/users/{id}': `A system administrator gets the full record, others the public part. ${ANY}`,
  'PUT /api/users/{id}': `Changes full name, email, account type or active. ${SYSADMIN}`,
  'DELETE /api/users/{id}': `Also revokes the user's API tokens and refresh tokens. ${SYSADMIN}`,
  'PUT /api/users/{id}/password': `Sets a new password, optionally to be changed at the next login. ${SYSADMIN}`,
  'GET /api/users/{id}/attributes': `The user's attributes (key to list of values) that row-level security rules read. ${SYSADMIN}`,
  'PUT /api/users/{id}/attributes': `Writes the whole attribute map at once: keys left out are removed. ${SYSADMIN}`,
  'GET /api/users/{id}/groups': `Groups the user belongs to. ${ANY}`,
  'GET /api/user-attributes': `Attribute keys in use on the installation, for the row-level security rule editor. ${ANY}`,

  'GET /api/groups': `Paged; search by name. System groups (such as «Менеджеры рабочих пространств») are flagged. ${ANY}`,
  'POST /api/groups': `Creates a group with a name and description. ${SYSADMIN}`,
  'GET /api/groups/{id}': `Name, description, whether it is a system group. ${ANY}`,
  'PUT /api/groups/{id}': `Changes the name or description. ${SYSADMIN}`,
  'DELETE /api/groups/{id}': `System groups cannot be deleted (400). ${SYSADMIN}`,
  'GET /api/groups/{id}/members': `Paged list of the group's users. ${ANY}`,
  'POST /api/groups/{id}/members': `Session tokens carry groups as at login, so the change takes effect at each user's next login. ${SYSADMIN}`,
  'DELETE /api/groups/{id}/members/{userId}': `Takes effect at the user's next login. ${SYSADMIN}`,

  'GET /api/workspaces': `Paged; search by name, filter by kind (personal or shared «Общее»). ${ANY}`,
  'POST /api/workspaces': `The creator becomes its Администратор. Access: members of «Менеджеры рабочих пространств».`,
  'GET /api/workspaces/{id}': `Members only; includes the pipeline stage binding if any. ${ANY}`,
  'PUT /api/workspaces/{id}': `Changes the name or description. ${WS_ADMIN}`,
  'DELETE /api/workspaces/{id}': `Refused while it is bound to a pipeline stage; a personal workspace cannot be deleted. ${WS_ADMIN}`,
  'GET /api/workspaces/{id}/members': `Members only. Each item is a user or a group with its role. ${ANY}`,
  'POST /api/workspaces/{id}/members': `Adds a user or a group with a role (Администратор, Редактор, Наблюдатель). ${WS_ADMIN}`,
  'PUT /api/workspaces/{id}/members/{memberId}': `The last Администратор cannot be demoted. ${WS_ADMIN}`,
  'DELETE /api/workspaces/{id}/members/{memberId}': `The last Администратор cannot be removed. ${WS_ADMIN}`,

  'GET /api/data-source': `${STD_LIST} \`type\` is the source kind. ${ANY}`,
  'POST /api/data-source': `Name, kind and connection settings (host, port, credentials, database, SSL, SSH tunnel, initial SQL); in the caller's personal workspace unless workspace_id is given. Secrets are stored encrypted. ${ANY}`,
  'GET /api/data-source/{id}': `Settings with secrets masked, workspace, author and timestamps. ${ANY}`,
  'PUT /api/data-source/{id}': `An omitted password stays unchanged. Any save marks the source changed for pipelines. ${OWNER}`,
  'DELETE /api/data-source/{id}': `Refused (400) while datasets depend on it; GET .../objects lists them. ${OWNER}`,
  'POST /api/data-source/{id}/check': `Optional settings override the saved ones for this check only; the answer is as for POST /api/data-source/check. ${ANY}`,
  'POST /api/data-source/{id}/copy': `Copies name and settings (secrets included) into the given workspace. ${OWNER}`,
  'GET /api/data-source/{id}/schemas': `From the metadata cache; POST .../metadata/refresh re-reads it. ${ANY}`,
  'GET /api/data-source/{id}/tables': `Tables and views of one schema, optionally searched by name. ${ANY}`,
  'GET /api/data-source/{id}/columns': `Name, database type, primitive type and nullability of each column. ${ANY}`,
  'POST /api/data-source/{id}/metadata/refresh': `Clears the metadata cache and reads schemas, tables and columns again. ${OWNER}`,
  'GET /api/data-source/{id}/objects': `Datasets, widgets and dashboards built on the source, with their workspaces. ${ANY}`,
  'POST /api/data-source/{id}/preview': `The first rows of one table (100 by default). ${ANY}`,
  'GET /api/data-source/{id}/column-values': `Distinct values of one column, optionally searched, for filter pickers. ${ANY}`,
  'GET /api/data-source/{id}/queries': `SQL console history, paged, optionally by time range. ${OWNER}`,
  'GET /api/data-source/{id}/queries/{queryId}': `Poll a query started by POST .../queries; when finished, one page of its result. ${OWNER}`,
  'POST /api/data-source/{id}/queries/{queryId}/cancel': `No body. Stops the query on the source. ${OWNER}`,
  'POST /api/data-source/{id}/sql/validate': `Asks the source to prepare the SQL; answers valid with the result columns, or the driver message. ${OWNER}`,
  'GET /api/data-source/{id}/access-log': `Reads, queries and edits of the source, paged, by user, action and time range. ${OWNER}`,

  'GET /api/source-types': `Each kind with its name, whether it is enabled, and default ports. ${ANY}`,
  'GET /api/source-types/{type}': `The settings fields of the kind with types and defaults, and whether it supports SSL, SSH and initial SQL. ${ANY}`,
  'PUT /api/source-types/{type}': `Enables or disables the kind or chooses its driver. ${SYSADMIN}`,

  'GET /api/dataset': `${STD_LIST} \`type\` is the dataset mode. ${ANY}`,
  'POST /api/dataset': `Name, workspace, live or extract mode and the sources it may use; the schema starts empty. ${ANY}`,
  'GET /api/dataset/{id}': `Objects, fields, relations, hierarchies, filters and parameters; a calculated field has a formula and no object. ${ANY}`,
  'PUT /api/dataset/{id}': `Name, description, mode and sources; the schema is left untouched. ${OWNER}`,
  'DELETE /api/dataset/{id}': `Refused (400) while widgets depend on it; GET .../dependencies lists them. ${OWNER}`,
  'PUT /api/dataset/{id}/schema': `Saves the whole schema at once: new items carry negative temporary ids, items left out are deleted. ${OWNER}`,
  'POST /api/dataset/{id}/schema/validate': `Same body and the same 422 messages as PUT .../schema; nothing is saved. ${OWNER}`,
  'POST /api/dataset/{id}/formula/validate': `Answers whether the formula is valid, its primitive type, or the message. ${OWNER}`,
  'POST /api/dataset/{id}/relations/suggest': `For the given objects (saved ids or negative temporary ids) proposes joins by matching fields. ${OWNER}`,
  'GET /api/dataset/{id}/dependencies': `The sources it reads, and the widgets and dashboards that use it. ${ANY}`,
  'POST /api/dataset/{id}/copy': `Copies the dataset with its schema into the given workspace. ${OWNER}`,
  'GET /api/dataset/{id}/field-values': `Distinct values of one field, optionally searched; row-level security applies. ${ANY}`,
  'POST /api/dataset/{id}/preview': `Rows of the chosen fields with filters and parameters; view_as_user_id (API only, system administrator only) reads as another user. ${ANY}`,
  'GET /api/dataset/{id}/effective-security': `What one user's reads get: row_filter_sql, the row predicate in the dataset's dialect with literals inlined (null when no rule applies), and hidden_field_ids. ${OWNER}`,
  'GET /api/dataset/{id}/rls-rules': `Row-level security rules: rows pass only where the field's value is in (or equals) the user's attribute values. ${OWNER}`,
  'POST /api/dataset/{id}/rls-rules': `field_id, attribute (a user attribute key), operator (in, eq), user_ids and group_ids (both empty: everyone); a user without the attribute sees no rows. ${OWNER}`,
  'PUT /api/dataset/{id}/rls-rules/{ruleId}': `Same body as create; replaces the rule. ${OWNER}`,
  'DELETE /api/dataset/{id}/rls-rules/{ruleId}': `Removes the rule; it stops applying at once. ${OWNER}`,
  'GET /api/dataset/{id}/cls-rules': `Column-level security rules: for the users and groups named (both empty: everyone) the fields are hidden (as if they did not exist) or masked (values read ***). ${OWNER}`,
  'POST /api/dataset/{id}/cls-rules': `field_ids (at least one field of this dataset), action (hide, mask), user_ids and group_ids (both empty: everyone); applies to every read at once. ${OWNER}`,
  'PUT /api/dataset/{id}/cls-rules/{ruleId}': `Same body as create; replaces the rule. ${OWNER}`,
  'DELETE /api/dataset/{id}/cls-rules/{ruleId}': `Removes the rule; it stops applying at once. ${OWNER}`,

  'GET /api/widget': `${STD_LIST} \`type\` is the widget kind. ${ANY}`,
  'POST /api/widget': `Name, kind, dataset and shelves (rows, series, columns), filters, sorts and calculated fields; compiled before saving to check it. ${ANY}`,
  'POST /api/widget/preview': `Takes a create body and answers as widget data, without saving anything. ${ANY}`,
  'GET /api/widget/{id}': `The saved configuration. ${ANY}`,
  'PUT /api/widget/{id}': `Same body as create; replaces the whole configuration. ${OWNER}`,
  'DELETE /api/widget/{id}': `Also removes it from dashboards. ${OWNER}`,
  'POST /api/widget/{id}/data': `Runs the widget's query: request filters are AND-ed with the saved ones; pages from 1 (page, page_size). view_as_user_id (API only, system administrator only) reads as another user. ${ANY}`,
};
