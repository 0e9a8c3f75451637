import type { ClickHouseSettings } from '@clickhouse/client';
import { splitStatements } from '../split-statements';

/**
 * ClickHouse over HTTP has no lasting connection to run initial_sql on. `SET name = value` statements become
 * settings sent with every request (the same effect as on a new connection); other statements run once when
 * the connector is first used.
 */
export function parseInitialSql(sql: string): { settings: ClickHouseSettings; statements: string[] } {
  const settings: Record<string, string | number> = {};
  const statements: string[] = [];
  for (const stmt of splitStatements(sql)) {
    const set = /^SET\s+([\s\S]+)$/i.exec(stmt);
    const pairs = set ? parseAssignments(set[1]) : undefined;
    if (pairs) Object.assign(settings, pairs);
    else statements.push(stmt);
  }
  return { settings: settings as ClickHouseSettings, statements };
}

const ASSIGNMENT = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'|-?[\d.]+|[A-Za-z_][A-Za-z0-9_]*)\s*(,|$)/;

function parseAssignments(text: string): Record<string, string | number> | undefined {
  const out: Record<string, string | number> = {};
  let rest = text.trim();
  while (rest.length) {
    const m = ASSIGNMENT.exec(rest);
    if (!m) return undefined;
    const raw = m[2];
    out[m[1]] = raw.startsWith("'")
      ? raw.slice(1, -1).replace(/\\(.)/g, '$1')
      : /^-?[\d.]+$/.test(raw)
        ? Number(raw)
        : raw;
    rest = rest.slice(m[0].length).trim();
  }
  return out;
}
