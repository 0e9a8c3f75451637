export * from './users';
export * from './groups';
export * from './workspaces';
export * from './auth-tokens';
export * from './settings';
export * from './data-sources';
export * from './datasets';
export * from './widgets';
