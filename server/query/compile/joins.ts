import type { DatasetObject, DatasetRelation } from './dataset-model';
import { datasetProblem } from './errors';
import { quoteIdentifier, type Dialect } from '../expr';
import type { QueryScope } from './scope';

/*
 * Stage 3: FROM and JOINs. Only the objects the query references are joined, along the dataset's relations: the
 * tree reached from the first referenced object (in the dataset's order) by breadth-first search, so that every
 * referenced object is connected through the fewest relations. A relation met from its right side is turned around
 * (LEFT becomes RIGHT). Objects of different data sources cannot meet in one query.
 */

export interface FromClause {
  sql: string;
  dataSourceId: number;
  /** Some join keeps unmatched rows (LEFT, RIGHT, FULL). */
  outer: boolean;
}

const FLIP: Record<DatasetRelation['joinType'], DatasetRelation['joinType']> = {
  inner: 'inner',
  left: 'right',
  right: 'left',
  full: 'full',
};

/** The objects a query with no references at all reads: the dataset's first object. */
export function defaultObjects(scope: QueryScope): number[] {
  const first = scope.model.objects[0];
  if (!first) throw datasetProblem('В датасете нет ни одного объекта');
  return [first.id];
}

function tableSql(dialect: Dialect, object: DatasetObject): string {
  if (object.kind === 'sql') {
    // The dataset owner's own read-only SELECT, as a derived table (a trailing semicolon would break the nesting).
    const text = (object.sql ?? '').trim().replace(/;\s*$/, '');
    if (!text) throw datasetProblem(`У объекта «${object.name}» нет текста запроса`);
    return `(${text})`;
  }
  if (!object.table) throw datasetProblem(`У объекта «${object.name}» не указана таблица`);
  const table = quoteIdentifier(dialect, object.table);
  return object.schema ? `${quoteIdentifier(dialect, object.schema)}.${table}` : table;
}

interface Edge {
  relation: DatasetRelation;
  from: number;
  to: number;
  joinType: DatasetRelation['joinType'];
}

export function buildFrom(scope: QueryScope, dialect: Dialect, used: number[]): FromClause {
  const order = new Map(scope.model.objects.map((o, i) => [o.id, i]));
  const wanted = [...new Set(used)].sort((a, b) => order.get(a)! - order.get(b)!);
  const sources = new Set(wanted.map((id) => scope.object(id).dataSourceId));
  if (sources.size > 1) {
    const names = wanted.map((id) => `«${scope.object(id).name}»`).join(', ');
    throw datasetProblem(
      `Объекты ${names} принадлежат разным источникам данных и не могут участвовать в одном запросе`,
    );
  }
  const root = wanted[0];
  const as = (id: number) => `${tableSql(dialect, scope.object(id))} AS ${quoteIdentifier(dialect, scope.alias(id))}`;
  if (wanted.length === 1) return { sql: as(root), dataSourceId: scope.object(root).dataSourceId, outer: false };

  // Breadth-first from the root over the relations (both directions), remembering how each object was reached.
  const via = new Map<number, Edge | null>([[root, null]]);
  const queue = [root];
  while (queue.length) {
    const at = queue.shift()!;
    for (const r of scope.model.relations) {
      if (!order.has(r.leftObjectId) || !order.has(r.rightObjectId)) continue;
      const next = r.leftObjectId === at ? r.rightObjectId : r.rightObjectId === at ? r.leftObjectId : null;
      if (next === null || via.has(next)) continue;
      via.set(next, {
        relation: r,
        from: at,
        to: next,
        joinType: r.leftObjectId === at ? r.joinType : FLIP[r.joinType],
      });
      queue.push(next);
    }
  }
  const needed = new Set<number>();
  for (const id of wanted) {
    if (!via.has(id)) {
      throw datasetProblem(
        `Объекты «${scope.object(root).name}» и «${scope.object(id).name}» не связаны в датасете: добавьте связь между ними`,
      );
    }
    for (let at: number | undefined = id; at !== undefined && !needed.has(at); at = via.get(at)?.from) needed.add(at);
  }
  // Joins in breadth-first order, so that each joins an object already in the FROM clause.
  const joins = [...via.entries()].filter(([id, e]) => e && needed.has(id)).map(([, e]) => e!);
  const parts = [as(root)];
  let outer = false;
  for (const e of joins) {
    const target = scope.object(e.to);
    if (scope.object(e.from).dataSourceId !== target.dataSourceId) {
      throw datasetProblem(
        `Объекты «${scope.object(e.from).name}» и «${target.name}» принадлежат разным источникам данных`,
      );
    }
    if (e.joinType === 'full' && dialect === 'mysql')
      throw datasetProblem('MySQL не поддерживает полное соединение (FULL JOIN)');
    if (e.joinType !== 'inner') outer = true;
    parts.push(`${joinKeyword(dialect, e.joinType)} ${as(e.to)} ON ${joinCondition(scope, dialect, e)}`);
  }
  return { sql: parts.join(' '), dataSourceId: scope.object(root).dataSourceId, outer };
}

function joinKeyword(dialect: Dialect, type: DatasetRelation['joinType']): string {
  const word = { inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL' }[type];
  // ClickHouse of the supported age wants the strictness spelled out.
  return dialect === 'clickhouse' ? `ALL ${word} JOIN` : `${word} JOIN`;
}

function joinCondition(scope: QueryScope, dialect: Dialect, e: Edge): string {
  const r = e.relation;
  if (r.conditions.length === 0)
    throw datasetProblem(
      `У связи объектов «${scope.object(r.leftObjectId).name}» и «${scope.object(r.rightObjectId).name}» нет условий`,
    );
  const column = (fieldId: number, objectId: number) => {
    const f = scope.fieldById(fieldId);
    if (!f || f.kind !== 'physical' || f.objectId !== objectId) {
      throw datasetProblem(
        `Связь объектов «${scope.object(r.leftObjectId).name}» и «${scope.object(r.rightObjectId).name}» ссылается на поле не своего объекта (id ${fieldId})`,
      );
    }
    return `${quoteIdentifier(dialect, scope.alias(objectId))}.${quoteIdentifier(dialect, f.column ?? f.name)}`;
  };
  const parts = r.conditions.map(
    (c) => `(${column(c.leftFieldId, r.leftObjectId)} = ${column(c.rightFieldId, r.rightObjectId)})`,
  );
  return parts.length === 1 ? parts[0] : `(${parts.join(' AND ')})`;
}
