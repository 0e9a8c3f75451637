/** Who is calling. For a session token the groups are those at login; for an API token, the owner's current ones. */
export interface Actor {
  userId: number;
  username: string;
  accountType: string;
  groupIds: number[];
  isSysadmin: boolean;
  isWorkspaceManager: boolean;
  tokenKind: 'session' | 'api';
  apiTokenId?: number;
}
