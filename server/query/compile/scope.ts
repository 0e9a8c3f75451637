import type { DatasetField, DatasetModel, DatasetObject } from './dataset-model';
import { invalid } from '../../kernel/errors';
import { inlineCalculated, call, columnRef } from './ast-tools';
import { calculatedFieldMissing } from './errors';
import {
  ExpressionError,
  inferType,
  parseExpression,
  quoteIdentifier,
  type CompileContext,
  type Dialect,
  type Expr,
  type Literal,
  type ParamSink,
  type PrimitiveType,
  type TypeResolver,
} from '../expr';
import { lookupFunction } from '../expr/functions';
import type { CalculatedFieldDef } from './types';

/*
 * Name resolution for one query. Every name in an expression resolves only through the dataset model:
 * - [object.field] is a physical field of a dataset object (by the object's and the field's names);
 * - [name] is a parameter of the dataset first, else a calculated field whose definition this query was given
 *   (the request's `calculated_fields` for widgets, the dataset's own formulas for previews and field values).
 * What comes out is the column's quoted name under a generated table alias (t<position of the object>), or the
 * parameter's value as a literal; nothing the caller wrote is copied into SQL.
 */

interface CalculatedSource {
  /** Where the definition came from, for error paths (e.g. `calculatedFields[2].sql`). */
  path: string;
  text?: string;
  ast?: Expr;
  declaredType?: PrimitiveType;
}

export interface ResolvedColumn {
  object: DatasetObject;
  field: DatasetField;
}

const PRIMITIVE_TYPES: readonly string[] = ['string', 'integer', 'float', 'boolean', 'date', 'datetime', 'unknown'];

function declared(type: string | undefined): PrimitiveType | undefined {
  if (type === 'number') return 'float';
  return type && PRIMITIVE_TYPES.includes(type) ? (type as PrimitiveType) : undefined;
}

export class QueryScope {
  /** Ids of the objects the query's expressions reference (found while their types are checked). */
  readonly usedObjects = new Set<number>();
  private readonly objectsByName = new Map<string, DatasetObject>();
  private readonly aliases = new Map<number, string>();
  private readonly physical = new Map<string, DatasetField>();
  private readonly calculated = new Map<string, CalculatedSource>();
  private readonly parsed = new Map<string, Expr>();
  private readonly types = new Map<string, PrimitiveType>();
  private readonly typing: string[] = [];

  constructor(
    readonly model: DatasetModel,
    private readonly parameters: Map<string, Literal>,
    private readonly parameterTypes: Map<string, PrimitiveType>,
  ) {
    model.objects.forEach((o, i) => {
      this.objectsByName.set(o.name, o);
      this.aliases.set(o.id, `t${i}`);
    });
    for (const f of model.fields) {
      if (f.kind === 'physical' && f.objectId !== null) this.physical.set(key(f.objectId, f.name), f);
    }
  }

  /** Calculated fields as the request defines them (widgets: the specification's rule 2). */
  defineFromRequest(defs: { path: string; def: CalculatedFieldDef }[]): this {
    for (const { path, def } of defs) {
      // The first definition of a name wins; the request's come before the saved widget's.
      if (!this.calculated.has(def.name))
        this.calculated.set(def.name, {
          path: `${path}.sql`,
          text: def.sql,
          declaredType: declared(def.primitive_type),
        });
    }
    return this;
  }

  /** Calculated fields as the dataset defines them (dataset previews and field values). */
  defineFromDataset(): this {
    for (const f of this.model.fields) {
      if (f.kind !== 'calculated' || this.calculated.has(f.name)) continue;
      const path = `fields[id=${f.id}]`;
      if (f.formula) this.calculated.set(f.name, { path, text: f.formula, declaredType: f.primitiveType });
      else if (f.derivation)
        this.calculated.set(f.name, { path, ast: this.derivationAst(f), declaredType: f.primitiveType });
    }
    return this;
  }

  object(id: number): DatasetObject {
    return this.model.objects.find((o) => o.id === id)!;
  }

  alias(objectId: number): string {
    return this.aliases.get(objectId)!;
  }

  /** [table.field] -> the dataset's object and physical field; an ExpressionError when there is none. */
  resolveColumn(table: string, field: string): ResolvedColumn {
    const object = this.objectsByName.get(table);
    const f = object ? this.physical.get(key(object.id, field)) : undefined;
    if (!object || !f) throw new ExpressionError(`поле [${table}.${field}] не найдено в датасете`);
    return { object, field: f };
  }

  fieldById(id: number): DatasetField | undefined {
    return this.model.fields.find((f) => f.id === id);
  }

  isParameter(name: string): boolean {
    return this.parameters.has(name);
  }

  /** The AST [name] stands for: a parameter's value, or the calculated field's definition. */
  calculatedAst(name: string): Expr {
    const param = this.parameters.get(name);
    if (param) return param;
    const cached = this.parsed.get(name);
    if (cached) return cached;
    const src = this.calculated.get(name);
    if (!src) throw calculatedFieldMissing(name);
    let ast: Expr;
    try {
      ast = src.ast ?? parseExpression(src.text ?? '');
    } catch (e) {
      if (e instanceof ExpressionError) throw invalid({ [src.path]: e.message });
      throw e;
    }
    this.parsed.set(name, ast);
    return ast;
  }

  /** Type checking also records which objects the query needs. */
  readonly typeResolver: TypeResolver = {
    column: (table, field) => {
      const { object, field: f } = this.resolveColumn(table, field);
      this.usedObjects.add(object.id);
      return f.primitiveType;
    },
    calculated: (name) => this.calculatedType(name),
  };

  typeOf(e: Expr): PrimitiveType {
    return inferType(e, this.typeResolver);
  }

  /** Resolution for the compiler, with the dialect's quoting. */
  compileContext(dialect: Dialect, params: ParamSink): CompileContext {
    return {
      dialect,
      params,
      column: (table, field) => {
        const { object, field: f } = this.resolveColumn(table, field);
        this.usedObjects.add(object.id);
        return `${quoteIdentifier(dialect, this.alias(object.id))}.${quoteIdentifier(dialect, f.column ?? f.name)}`;
      },
      calculated: (name) => this.calculatedAst(name),
    };
  }

  /** A dataset formula expanded with the dataset's own definitions, so that it names columns only. */
  datasetFieldAst(f: DatasetField): Expr {
    if (f.kind === 'physical') {
      const object = this.model.objects.find((o) => o.id === f.objectId);
      if (!object) throw new ExpressionError(`поле ${f.name} ссылается на объект, которого нет в датасете`);
      return columnRef(object.name, f.name);
    }
    const own = (field: DatasetField): Expr => {
      if (field.formula) return parseExpression(field.formula);
      if (field.derivation) return this.derivationAst(field);
      throw new ExpressionError(`у вычисляемого поля ${field.name} нет формулы`);
    };
    const lookup = (name: string): Expr => {
      const param = this.parameters.get(name);
      if (param) return param;
      const g = this.model.fields.find((x) => x.kind === 'calculated' && x.name === name);
      if (!g) throw new ExpressionError(`вычисляемое поле [${name}] не найдено в датасете`);
      return own(g);
    };
    return inlineCalculated(own(f), lookup);
  }

  private derivationAst(f: DatasetField): Expr {
    const d = f.derivation!;
    const source = this.fieldById(d.fieldId);
    if (!source) throw new ExpressionError(`поле ${f.name} выводится из поля, которого нет в датасете`);
    const base = this.datasetFieldAst(source);
    const literals: Expr[] = (d.args ?? []).map((a) =>
      typeof a === 'number'
        ? { kind: 'literal', type: Number.isInteger(a) ? 'integer' : 'float', value: a }
        : { kind: 'literal', type: 'string', value: a },
    );
    // A function with a unit takes it first (DATETRUNC('month', x)); others take the field first.
    return lookupFunction(d.function)?.units
      ? call(d.function, ...literals, base)
      : call(d.function, base, ...literals);
  }

  private calculatedType(name: string): PrimitiveType {
    const paramType = this.parameterTypes.get(name);
    if (paramType) return paramType;
    const cached = this.types.get(name);
    if (cached) return cached;
    if (this.typing.includes(name)) {
      throw new ExpressionError(
        `циклическая ссылка между вычисляемыми полями: ${[...this.typing, name].map((n) => `[${n}]`).join(' → ')}`,
      );
    }
    const ast = this.calculatedAst(name);
    this.typing.push(name);
    let t: PrimitiveType;
    try {
      t = inferType(ast, this.typeResolver);
    } catch (e) {
      // A mistake inside a definition is reported at the definition, once, rather than at every shelf using it.
      const src = this.calculated.get(name);
      if (e instanceof ExpressionError && src) throw invalid({ [src.path]: e.message });
      throw e;
    } finally {
      this.typing.pop();
    }
    // The formula decides; the declared type only fills in what the formula leaves open.
    const result = t === 'unknown' ? (this.calculated.get(name)?.declaredType ?? t) : t;
    this.types.set(name, result);
    return result;
  }
}

const key = (objectId: number, name: string) => `${objectId}\u0000${name}`;
