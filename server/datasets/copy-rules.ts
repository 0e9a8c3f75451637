import { sql } from 'drizzle-orm';
import type { Tx } from '../../db/client';
import { COPY_MAP } from '../objects/copy-map';

/*
 * The dataset security rules' part of copyDatasets (store.ts): the row- and column-level rules of every copied dataset
 * travel with it, on the copied fields, so that a copy never shows what the original hides (fail closed; the users and
 * groups they name are global). An updated copy's rules are replaced by the original's. One statement per rule kind
 * whatever the count; it runs after the copies' fields are written (a row rule refers to its field by a foreign key)
 * and before the fields an updated copy lost are deleted (its old rules, which may name them, are gone by then).
 * Self-contained (the copy map is its only input) so that it can move to the rule stores' owner as is.
 */

const COPIED = sql`ds as (select old_id, new_id from ${COPY_MAP} where kind = 'dataset'),
  gone_of as (select new_id as id from ${COPY_MAP} where kind = 'dataset' and not created)`;

export async function copyDatasetRules(tx: Tx): Promise<void> {
  await tx.execute(sql`with ${COPIED},
      gone as (delete from dataset_rls_rules where dataset_id in (select id from gone_of))
    insert into dataset_rls_rules (dataset_id, field_id, attribute, operator, user_ids, group_ids)
    select ds.new_id, coalesce(fm.new_id, r.field_id), r.attribute, r.operator, r.user_ids, r.group_ids
    from dataset_rls_rules r join ds on ds.old_id = r.dataset_id
    left join ${COPY_MAP} fm on fm.kind = 'dataset_field' and fm.old_id = r.field_id`);
  // Field ids remapped in one set-based join (hashed once), not a subquery per rule.
  await tx.execute(sql`with ${COPIED},
      gone as (delete from dataset_cls_rules where dataset_id in (select id from gone_of)),
      named as (
        select c.id, array_agg(coalesce(fm.new_id, u.f) order by u.n) as ids
        from dataset_cls_rules c join ds on ds.old_id = c.dataset_id
        cross join lateral unnest(c.field_ids) with ordinality u(f, n)
        left join ${COPY_MAP} fm on fm.kind = 'dataset_field' and fm.old_id = u.f
        group by c.id)
    insert into dataset_cls_rules (dataset_id, field_ids, action, user_ids, group_ids)
    select ds.new_id, coalesce(named.ids, '{}'::int[]), c.action, c.user_ids, c.group_ids
    from dataset_cls_rules c join ds on ds.old_id = c.dataset_id left join named on named.id = c.id`);
}
