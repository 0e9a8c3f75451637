import type { DatasetField, DatasetModel } from '../query/compile/dataset-model';
import type { CalculatedFieldDef, WidgetQueryInput } from '../query/compile/types';
import { children, lookupFunction, parseExpression, type Expr } from '../query/expr';

/*
 * What a rollup needs to know of a dataset field: how a widget expression names it ([object.field] or [calculated]),
 * whether its formula aggregates (and with which functions) or reads a parameter.
 */

export const isTemporal = (f: DatasetField) => f.primitiveType === 'date' || f.primitiveType === 'datetime';
export const isNumeric = (f: DatasetField) => f.primitiveType === 'integer' || f.primitiveType === 'float';

/** The expression naming the field, as a widget's shelf would: `[object.field]` for a column, `[name]` otherwise. */
export function fieldRef(model: DatasetModel, f: DatasetField): string {
  const esc = (s: string) => s.replace(/]/g, ']]');
  if (f.objectId !== null) {
    const object = model.objects.find((o) => o.id === f.objectId);
    if (object) return `[${esc(object.name)}.${esc(f.name)}]`;
  }
  return `[${esc(f.name)}]`;
}

/**
 * The dataset's calculated and derived fields as request definitions: a widget query names a calculated field only
 * when the request defines it (specification rule 2), and a rollup's build and estimates read the dataset's own.
 */
export function datasetDefinitions(model: DatasetModel): WidgetQueryInput['calculatedFields'] {
  const out: WidgetQueryInput['calculatedFields'] = [];
  const text = (a: string | number) => (typeof a === 'number' ? String(a) : `'${a.replaceAll("'", "''")}'`);
  for (const f of model.fields) {
    if (f.kind !== 'calculated') continue;
    let sql: string | null = f.formula;
    if (!sql && f.derivation) {
      const source = model.fields.find((x) => x.id === f.derivation!.fieldId);
      if (!source) continue; // the build names the missing field
      const ref = fieldRef(model, source);
      const args = (f.derivation.args ?? []).map(text);
      const { function: fn } = f.derivation;
      // A function with a unit takes it first (DATETRUNC('month', x)), as scope.ts builds derived fields.
      sql = lookupFunction(fn)?.units ? `${fn}(${[...args, ref].join(', ')})` : `${fn}(${[ref, ...args].join(', ')})`;
    }
    if (!sql) continue;
    const def: CalculatedFieldDef = { name: f.name, sql, primitive_type: f.primitiveType };
    out.push({ path: `fields[id=${f.id}]`, def });
  }
  return out;
}

export interface FormulaFacts {
  /** Aggregate functions the formula (and the calculated fields it reads) calls, upper-case, each once. */
  aggregates: string[];
  /** It reads a parameter of the dataset. */
  parameter: boolean;
}

/** Facts about a calculated field's formula (a column field or a derived one: none). */
export function formulaFacts(model: DatasetModel, f: DatasetField): FormulaFacts {
  const facts: FormulaFacts = { aggregates: [], parameter: false };
  if (f.kind !== 'calculated' || !f.formula) return facts;
  const seen = new Set<string>();
  const params = new Set(model.parameters.map((p) => p.name.toLowerCase()));
  const visitField = (field: DatasetField) => {
    if (seen.has(field.name) || !field.formula) return;
    seen.add(field.name);
    let ast: Expr;
    try {
      ast = parseExpression(field.formula);
    } catch {
      return; // a broken formula is the schema editor's to report; the build will fail on it
    }
    visit(ast);
  };
  const visit = (e: Expr) => {
    if (e.kind === 'call' && lookupFunction(e.name)?.aggregate) {
      const name = e.name.toUpperCase();
      if (!facts.aggregates.includes(name)) facts.aggregates.push(name);
    }
    if (e.kind === 'calc_ref') {
      if (params.has(e.name.toLowerCase())) facts.parameter = true;
      const calc = model.fields.find((x) => x.objectId === null && x.name === e.name);
      if (calc) visitField(calc);
    }
    children(e).forEach(visit);
  };
  visitField(f);
  return facts;
}
