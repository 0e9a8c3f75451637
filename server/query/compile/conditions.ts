import type { DatasetFilter } from './dataset-model';
import { at, datasetProblem } from './errors';
import { compileFilter, ExpressionError, isAggregate, parseExpression, type CompileContext, type Expr } from '../expr';
import type { QueryScope } from './scope';
import type { FilterSpec } from './types';

/*
 * Stage 2: the conditions. The dataset's own filters, the widget's saved filters and the request's filters are
 * all AND-ed (the specification's rule 1): conditions that exclude each other simply give an empty result. A
 * condition over an aggregate goes to HAVING, the others to WHERE.
 */

/** A condition ready to compile, once the query knows its dialect and parameter sink. */
export interface Condition {
  path: string;
  aggregate: boolean;
  /** The condition's subject, when it has one the query must read (see countsDatasetRows). */
  ast?: Expr;
  compile(ctx: CompileContext): string;
}

/**
 * The fixed name a dataset filter's subject is compiled under. The filter text handed to compileFilter is only ever
 * this constant; the subject itself is an AST built from the dataset, so no name needs to be written as text.
 */
const SUBJECT = '\u0000dataset filter subject';

function withSubject(ctx: CompileContext, subject: Expr): CompileContext {
  return { ...ctx, calculated: (name) => (name === SUBJECT ? subject : ctx.calculated(name)) };
}

/** A filter of the request or of the saved widget: its `sql` is an expression of the language. */
export function widgetCondition(path: string, filter: FilterSpec, scope: QueryScope): Condition {
  const ast = at(`${path}.sql`, () => parseExpression(filter.sql));
  const aggregate = at(`${path}.sql`, () => {
    scope.typeOf(ast);
    return isAggregate(ast, (name) => scope.calculatedAst(name));
  });
  return {
    path,
    aggregate,
    ast,
    compile: (ctx) => at(`${path}.values`, () => compileFilter(filter, ctx)),
  };
}

/** A filter the dataset itself defines on one of its fields (physical, or calculated with the dataset's formula). */
export function datasetCondition(filter: DatasetFilter, scope: QueryScope): Condition {
  const field = scope.fieldById(filter.fieldId);
  const name = field ? `«${field.title || field.name}»` : `(id ${filter.fieldId})`;
  const fail = (e: unknown): never => {
    if (e instanceof ExpressionError)
      throw datasetProblem(`Фильтр датасета по полю ${name} не применяется: ${e.message}`);
    throw e;
  };
  try {
    if (!field) throw new ExpressionError('поле не найдено в датасете');
    const subject = scope.datasetFieldAst(field);
    scope.typeOf(subject);
    const aggregate = isAggregate(subject);
    const spec: FilterSpec = {
      sql: `[${SUBJECT}]`,
      op: filter.op,
      values: filter.values,
      value_type: filter.valueType,
    };
    return {
      path: `dataset filter ${filter.id}`,
      aggregate,
      ast: subject,
      compile: (ctx) => {
        try {
          return compileFilter(spec, withSubject(ctx, subject));
        } catch (e) {
          return fail(e);
        }
      },
    };
  } catch (e) {
    return fail(e);
  }
}
