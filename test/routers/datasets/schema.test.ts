import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../../support/app';
import { createRoleCast, type RoleCast } from '../../support/factories';
import { failure, ok } from '../../support/rest';
import type { z } from 'zod';
import type { validateSchemaOutput } from '../../../routers/datasets/schemas';
import {
  byName,
  createDataset,
  emptySchema,
  insertSource,
  shopSchema,
  type DatasetDetails,
  type SchemaBody,
} from './helpers';

const ID_REQUIRED = 'Object id is required (use a negative temp id for new objects)';
const DERIVED_FORMULA = 'formula у производного поля генерируется из derivation и не принимается';
const KIND_CHANGE = 'Field kind cannot change (calculated ↔ physical)';
const fieldNotFound = (id: number) => `Поле датасета не найдено (id ${id})`;

const { t, api } = useTestApp();
let cast: RoleCast;
let editor: string;
let sourceId: number;

beforeAll(async () => {
  cast = await createRoleCast(t.deps, api);
  editor = cast.tokens.editor!;
  sourceId = await insertSource(t.deps, cast.workspaceId);
});

const newDataset = async (token = editor) =>
  (await createDataset(api, token, { workspace_id: cast.workspaceId, data_source_ids: [sourceId] })).id as number;
const put = (id: number, body: unknown, token = editor) => api.put(`/api/dataset/${id}/schema`, body, token);
const validate = (id: number, body: unknown, token = editor) =>
  api.post(`/api/dataset/${id}/schema/validate`, body, token);
const get = async (id: number, token = editor) => ok<DatasetDetails>(await api.get(`/api/dataset/${id}`, token));

/** Saves the shop schema and returns the saved dataset. */
async function savedShop(id: number) {
  const res = await put(id, shopSchema(sourceId));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return ok<DatasetDetails>(res);
}

/** The saved schema as a body for the next save (a derived field's formula is the platform's, not sent back). */
function bodyOf(saved: DatasetDetails): SchemaBody {
  const { objects, fields, relations, hierarchies, filters, parameters } = structuredClone(saved);
  for (const f of fields) if (f.derivation) f.formula = null;
  // A saved filter answers op and value_type as text: they are the ones it was saved with, which the body takes.
  return { objects, fields, relations, hierarchies, filters: filters as SchemaBody['filters'], parameters };
}

describe('PUT /api/dataset/{id}/schema', () => {
  it('writes a whole schema of new elements, resolving temporary ids to real ones', async () => {
    const id = await newDataset();
    const data = await savedShop(id);
    const orders = byName(data.objects, 'orders');
    const customers = byName(data.objects, 'customers');
    expect(orders.id).toBeGreaterThan(0);
    expect(orders).toMatchObject({
      data_source_id: sourceId,
      kind: 'table',
      schema: 'public',
      table: 'orders',
      sql: null,
    });

    const field = (name: string, objectId: number | null = null) =>
      data.fields.find((f) => f.name === name && (objectId === null || f.object_id === objectId))!;
    const customerId = field('customer_id', orders.id);
    const customersId = field('id', customers.id);
    const createdAt = field('created_at', orders.id);
    expect(customerId).toMatchObject({ kind: 'physical', column: 'customer_id', formula: null, title: 'customer_id' });
    expect(field('amount', orders.id)).toMatchObject({ title: 'Сумма', aggregation: 'sum', primitive_type: 'float' });

    // A calculated field: formula filled in, object_id empty, the type inferred from the formula.
    expect(field('Выручка')).toMatchObject({
      kind: 'calculated',
      object_id: null,
      column: null,
      formula: 'SUM([orders.amount])',
      primitive_type: 'float',
    });
    expect(field('Средний чек')).toMatchObject({
      object_id: null,
      formula: '[Выручка] / COUNTD([orders.id])',
      primitive_type: 'float',
    });
    // A derived field: formula built from the derivation, which refers to the new field's real id.
    expect(field('Год')).toMatchObject({
      kind: 'calculated',
      object_id: null,
      formula: 'YEAR([orders.created_at])',
      derivation: { field_id: createdAt.id, function: 'YEAR', args: [] },
      primitive_type: 'integer',
    });

    // A relation between two new objects on fields of new objects.
    expect(data.relations).toEqual([
      {
        id: expect.any(Number),
        left_object_id: orders.id,
        right_object_id: customers.id,
        join_type: 'left',
        conditions: [{ left_field_id: customerId.id, right_field_id: customersId.id }],
      },
    ]);
    expect(data.hierarchies).toEqual([
      { id: expect.any(Number), name: 'География', field_ids: [field('city').id, field('Год').id] },
    ]);
    expect(data.filters).toEqual([
      {
        id: expect.any(Number),
        field_id: field('city').id,
        op: 'in',
        values: ['Москва', 'Казань'],
        value_type: 'string',
      },
    ]);
    expect(data.parameters).toEqual([
      {
        id: expect.any(Number),
        name: 'Порог',
        primitive_type: 'number',
        default_value: '10',
        domain: { kind: 'range', min: '0', max: '100', step: '5' },
        order: 0,
      },
    ]);
    expect(data.version).toBe(2);

    // GET answers the same schema.
    expect(await get(id)).toEqual(data);
  });

  it('keeps ids across saves, updates in place and deletes whatever is omitted', async () => {
    const id = await newDataset();
    const first = await savedShop(id);
    const body = bodyOf(first);
    const city = byName(body.fields, 'city');
    city.title = 'Город клиента';
    // Drop the customers object with everything on it, the parameter and the hierarchy; add a new calculated field.
    const customers = byName(body.objects, 'customers');
    body.objects = body.objects.filter((o) => o.id !== customers.id);
    body.fields = body.fields.filter((f) => f.object_id !== customers.id && f.name !== 'Год');
    body.relations = [];
    body.hierarchies = [];
    body.filters = [];
    body.parameters = [];
    body.fields.push({ id: -1, name: 'Заказов', formula: 'COUNT([orders.id])' });

    const res = await put(id, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const second = ok<DatasetDetails>(res);
    expect(second.objects.map((o) => o.id)).toEqual([byName(first.objects, 'orders').id]);
    const kept = first.fields.filter(
      (f) => f.object_id === byName(first.objects, 'orders').id || ['Выручка', 'Средний чек'].includes(f.name),
    );
    for (const f of kept)
      expect(
        second.fields.find((x) => x.id === f.id),
        f.name,
      ).toBeDefined();
    expect(second.fields).toHaveLength(kept.length + 1);
    expect(byName(second.fields, 'Заказов')).toMatchObject({
      primitive_type: 'integer',
      formula: 'COUNT([orders.id])',
    });
    expect(second.relations).toEqual([]);
    expect(second.hierarchies).toEqual([]);
    expect(second.filters).toEqual([]);
    expect(second.parameters).toEqual([]);
    expect(second.version).toBe(first.version + 1);
    expect(Date.parse(second.updated_at)).toBeGreaterThan(Date.parse(first.updated_at));

    // An empty body empties the schema.
    const cleared = await put(id, emptySchema);
    expect(cleared.status).toBe(200);
    expect(ok<DatasetDetails>(cleared)).toMatchObject(emptySchema);
  });

  it("takes number, the parameters' word, as a field's type too: saved and read back as float", async () => {
    const id = await newDataset();
    const body = shopSchema(sourceId);
    const amount = body.fields.find((f) => f.column === 'amount')!;
    amount.primitive_type = 'number';
    const checked = await validate(id, body);
    expect(checked.status, JSON.stringify(checked.body)).toBe(200);
    const validated = ok<z.output<typeof validateSchemaOutput>>(checked).fields.find((f) => f.id === amount.id);
    expect(validated?.primitive_type).toBe('float');
    const saved = await put(id, body);
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const field = (d: DatasetDetails) => d.fields.find((f) => f.column === 'amount')!;
    expect(field(ok<DatasetDetails>(saved)).primitive_type).toBe('float');
    expect(field(await get(id)).primitive_type).toBe('float');
    // Anything else is still refused on that field's path.
    amount.primitive_type = 'money' as 'number';
    const refused = await put(id, body);
    expect(refused.status).toBe(422);
    expect(Object.keys(failure(refused).errors ?? {})).toEqual([
      `fields[${body.fields.indexOf(amount)}].primitiveType`,
    ]);
  });

  it('changes a saved physical field in place (same id) and re-checks formulas over it', async () => {
    const id = await newDataset();
    const body = bodyOf(await savedShop(id));
    const amount = byName(body.fields, 'amount');
    amount.name = 'total';
    amount.column = 'total';
    const res = await put(id, body);
    expect(res.status).toBe(422);
    // The calculated field still names the old field: its formula no longer resolves.
    const revenueAt = body.fields.findIndex((f) => f.name === 'Выручка');
    expect(failure(res).errors).toEqual({
      [`fields[${revenueAt}].formula`]:
        'Ошибка в выражении: поле [orders.amount] не найдено в датасете (строка 1, позиция 5)',
    });
    byName(body.fields, 'Выручка').formula = 'SUM([orders.total])';
    const fixed = await put(id, body);
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(200);
    expect(ok<DatasetDetails>(fixed).fields.find((f) => f.id === amount.id)).toMatchObject({
      name: 'total',
      column: 'total',
    });
  });

  it('accepts a field of a new object and a new field of a saved object in one save', async () => {
    const id = await newDataset();
    const body = bodyOf(await savedShop(id));
    const orders = byName(body.objects, 'orders');
    body.objects.push({ id: -5, data_source_id: sourceId, table: 'items' });
    body.fields.push(
      { id: -6, object_id: -5, column: 'order_id', primitive_type: 'integer' },
      { id: -7, object_id: orders.id, column: 'status', primitive_type: 'string' },
    );
    const orderKey = body.fields.find((f) => f.object_id === orders.id && f.name === 'id')!;
    body.relations.push({
      id: -2,
      left_object_id: -5,
      right_object_id: orders.id,
      conditions: [{ left_field_id: -6, right_field_id: orderKey.id }],
    });
    const res = await put(id, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const saved = ok<DatasetDetails>(res);
    const items = byName(saved.objects, 'items');
    expect(items).toMatchObject({ table: 'items', schema: null });
    const itemKey = saved.fields.find((f) => f.object_id === items.id)!;
    expect(itemKey).toMatchObject({ name: 'order_id' });
    expect(saved.relations[1]).toMatchObject({
      left_object_id: items.id,
      right_object_id: orders.id,
      join_type: 'left',
      conditions: [{ left_field_id: itemKey.id, right_field_id: orderKey.id }],
    });
  });

  it('answers every element without an id with the specification message at its path', async () => {
    const id = await newDataset();
    const res = await put(id, {
      objects: [{ data_source_id: sourceId, table: 'orders' }],
      fields: [{ id: 0, name: 'x', formula: '1' }],
      relations: [],
      hierarchies: [{ name: 'h', field_ids: [1] }],
      filters: [],
      parameters: [{ id: null, name: 'p', primitive_type: 'number' }],
    });
    expect(res.status).toBe(422);
    expect(failure(res).message).toBe('Ошибка валидации');
    expect(failure(res).errors).toEqual({
      'objects[0].id': ID_REQUIRED,
      'fields[0].id': ID_REQUIRED,
      'hierarchies[0].id': ID_REQUIRED,
      'parameters[0].id': ID_REQUIRED,
    });
  });

  it('refuses ids that are not in this dataset, and references to missing fields', async () => {
    const other = await newDataset();
    const foreign = await savedShop(other);
    const foreignField = foreign.fields[0].id;
    const foreignObject = foreign.objects[0].id;
    const id = await newDataset();
    const res = await put(id, {
      objects: [
        { id: -1, data_source_id: sourceId, table: 'orders' },
        { id: foreignObject, data_source_id: sourceId, table: 'customers' },
      ],
      fields: [
        { id: foreignField, object_id: -1, column: 'a' },
        { id: -2, object_id: -1, column: 'b', sort_by_field_id: -99 },
        { id: -3, name: 'y', derivation: { field_id: 424242, function: 'YEAR' } },
        { id: -4, object_id: -9, column: 'c' },
      ],
      relations: [
        {
          id: -1,
          left_object_id: -1,
          right_object_id: -7,
          conditions: [{ left_field_id: -2, right_field_id: 777777 }],
        },
      ],
      hierarchies: [{ id: -1, name: 'h', field_ids: [-2, -55] }],
      filters: [{ id: -1, field_id: -66, op: 'eq', values: ['x'] }],
      parameters: [{ id: 31337, name: 'p', primitive_type: 'number' }],
    });
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      'objects[1].id': `Объект датасета не найден (id ${foreignObject})`,
      'fields[0].id': fieldNotFound(foreignField),
      'fields[1].sortByFieldId': fieldNotFound(-99),
      'fields[2].derivation.fieldId': fieldNotFound(424242),
      'fields[3].objectId': 'Объект датасета не найден (id -9)',
      'relations[0].rightObjectId': 'Объект датасета не найден (id -7)',
      'relations[0].conditions[0].rightFieldId': fieldNotFound(777777),
      'hierarchies[0].fieldIds[1]': fieldNotFound(-55),
      'filters[0].fieldId': fieldNotFound(-66),
      'parameters[0].id': 'Параметр датасета не найден (id 31337)',
    });
  });

  it('refuses formula on a derived field and a change of field kind', async () => {
    const id = await newDataset();
    const body = bodyOf(await savedShop(id));
    const yearAt = body.fields.findIndex((f) => f.name === 'Год');
    body.fields[yearAt].formula = 'YEAR([orders.created_at])';
    const cityAt = body.fields.findIndex((f) => f.name === 'city');
    body.fields[cityAt] = { id: body.fields[cityAt].id, name: 'city', formula: "'Москва'" };
    const revenueAt = body.fields.findIndex((f) => f.name === 'Выручка');
    const orders = byName(body.objects, 'orders');
    body.fields[revenueAt] = {
      id: body.fields[revenueAt].id,
      kind: 'physical',
      object_id: orders.id,
      column: 'revenue',
    };
    const res = await put(id, body);
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      [`fields[${yearAt}].formula`]: DERIVED_FORMULA,
      [`fields[${cityAt}].kind`]: KIND_CHANGE,
      [`fields[${revenueAt}].kind`]: KIND_CHANGE,
      // The field that refers to [Выручка] loses its target with the refused change.
      [`fields[${revenueAt + 2}].formula`]:
        'Ошибка в выражении: поле [Выручка] не найдено в датасете (строка 1, позиция 1)',
    });
  });

  it('refuses a formula with a new derived field too (negative id)', async () => {
    const id = await newDataset();
    const body = shopSchema(sourceId);
    body.fields[7].formula = 'YEAR([orders.created_at])';
    const res = await put(id, body);
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({ 'fields[7].formula': DERIVED_FORMULA });
  });

  it('requires primitive_type of a parameter («must not be blank») and checks its values', async () => {
    const id = await newDataset();
    const res = await put(id, {
      ...emptySchema,
      parameters: [
        { id: -1, name: 'a', primitive_type: '' },
        { id: -2, name: 'b' },
        { id: -3, name: 'c', primitive_type: '  ' },
        { id: -4, name: 'd', primitive_type: 'money' },
      ],
    });
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      'parameters[0].primitiveType': 'must not be blank',
      'parameters[1].primitiveType': 'must not be blank',
      'parameters[2].primitiveType': 'must not be blank',
      'parameters[3].primitiveType': 'must be one of: number, string, integer, float, boolean, date, datetime',
    });
    const values = await put(id, {
      ...emptySchema,
      parameters: [
        { id: -1, name: 'n', primitive_type: 'number', default_value: 'десять' },
        {
          id: -2,
          name: 'l',
          primitive_type: 'integer',
          default_value: '1',
          domain: { kind: 'list', values: ['1', '2.5'] },
        },
        { id: -3, name: 's', primitive_type: 'string', domain: { kind: 'range', min: 'a' } },
        { id: -4, name: 'n', primitive_type: 'date', default_value: '2024-02-30' },
      ],
    });
    expect(values.status).toBe(422);
    expect(failure(values).errors).toEqual({
      'parameters[0].defaultValue': 'must be a number',
      'parameters[1].domain.values[1]': 'must be an integer',
      'parameters[2].domain.kind': 'Диапазон не задаётся для типа string',
      'parameters[3].name': 'Имя уже используется в датасете',
      'parameters[3].defaultValue': 'must be a date (YYYY-MM-DD)',
    });
  });

  it('reports formula errors (unknown reference, cycle, types, syntax) on fields[i].formula with the expression message', async () => {
    const id = await newDataset();
    const body = shopSchema(sourceId);
    body.fields.push(
      { id: -40, name: 'Неизвестное', formula: 'SUM([orders.discount])' },
      { id: -41, name: 'A', formula: '[B] + 1' },
      { id: -42, name: 'B', formula: '[A] * 2' },
      { id: -43, name: 'Строка', formula: '[customers.city] * 2' },
      { id: -44, name: 'Синтаксис', formula: 'SUM([orders.amount]' },
      { id: -45, name: 'Зависит от цикла', formula: '[A] + [Порог]' },
      { id: -46, name: 'Вложенный', formula: 'SUM([Выручка])' },
      { id: -47, name: 'Самоссылка', formula: '[Самоссылка]' },
    );
    const res = await put(id, body);
    expect(res.status).toBe(422);
    const e = failure(res).errors!;
    expect(Object.keys(e).sort()).toEqual([
      'fields[10].formula',
      'fields[11].formula',
      'fields[12].formula',
      'fields[13].formula',
      'fields[15].formula',
      'fields[16].formula',
      'fields[9].formula',
    ]);
    expect(e['fields[9].formula']).toBe(
      'Ошибка в выражении: поле [orders.discount] не найдено в датасете (строка 1, позиция 5)',
    );
    expect(e['fields[10].formula']).toBe(
      'Ошибка в выражении: циклическая ссылка между вычисляемыми полями: [A] → [B] → [A] (строка 1, позиция 1)',
    );
    expect(e['fields[11].formula']).toMatch(/^Ошибка в выражении: циклическая ссылка между вычисляемыми полями: /);
    expect(e['fields[12].formula']).toBe(
      'Ошибка в выражении: оператор * ожидает число, а получено «строка» (строка 1, позиция 1)',
    );
    expect(e['fields[13].formula']).toMatch(/^Ошибка в выражении: /);
    expect(e['fields[15].formula']).toBe(
      'Ошибка в выражении: в вычисляемом поле [Выручка]: агрегатная функция SUM не может стоять внутри SUM (строка 1, позиция 5)',
    );
    expect(e['fields[16].formula']).toBe(
      'Ошибка в выражении: циклическая ссылка между вычисляемыми полями: [Самоссылка] → [Самоссылка] (строка 1, позиция 1)',
    );
  });

  it('checks the derived function, the structure of fields and objects, names and filters', async () => {
    const id = await newDataset();
    const otherSource = await insertSource(t.deps, cast.workspaceId);
    const res = await put(id, {
      objects: [
        { id: -1, data_source_id: sourceId, table: 'orders' },
        { id: -2, data_source_id: otherSource, table: 'x' },
        { id: -3, data_source_id: sourceId, name: 'orders', table: 'orders2' },
        { id: -4, data_source_id: sourceId, kind: 'sql', name: 'q', sql: 'delete from orders' },
        { id: -5, data_source_id: sourceId, name: 'a.b', table: 't' },
      ],
      fields: [
        { id: -10, object_id: -1, column: 'amount', primitive_type: 'float' },
        { id: -11, name: 'm', derivation: { field_id: -10, function: 'SUM' } },
        { id: -12, name: 'n', derivation: { field_id: -10, function: 'NOPE' } },
        { id: -13, kind: 'physical', object_id: -1 },
        { id: -14, name: 'c', formula: '1', object_id: -1 },
        { id: -15, kind: 'calculated', name: 'empty' },
        { id: -16, object_id: -1, column: 'amount' },
        { id: -17, name: 'Месяц', derivation: { field_id: -10, function: 'MONTH' } },
      ],
      relations: [
        { id: -1, left_object_id: -1, right_object_id: -1, conditions: [{ left_field_id: -10, right_field_id: -11 }] },
      ],
      hierarchies: [],
      filters: [
        { id: -1, field_id: -10, op: 'between', values: ['1'], value_type: 'number' },
        { id: -2, field_id: -10, op: 'eq', values: ['x'], value_type: 'number' },
      ],
      parameters: [{ id: -1, name: 'm', primitive_type: 'number' }],
    });
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      'objects[1].dataSourceId': `Источник данных не подключён к датасету (id ${otherSource})`,
      'objects[2].name': 'Имя уже используется в датасете',
      'objects[3].sql': 'Допускается один запрос SELECT (или WITH ... SELECT) без точки с запятой внутри',
      'objects[4].name': 'Имя не может содержать точку: она отделяет объект от поля в ссылке [объект.поле]',
      'fields[1].derivation.function': 'Агрегатная функция SUM не подходит для производного поля',
      'fields[2].derivation.function': 'Неизвестная функция NOPE',
      'fields[3].column': 'must not be blank',
      'fields[3].name': 'must not be blank',
      'fields[4].objectId': 'У вычисляемого поля object_id не задаётся',
      'fields[5].formula': 'must not be blank',
      'fields[6].name': 'Имя уже используется в датасете',
      'fields[7].derivation':
        'Ошибка в выражении: аргумент 1 функции MONTH должен быть типа «дата», а получено «дробное число»',
      'relations[0].rightObjectId': 'Связь должна соединять два разных объекта',
      'relations[0].conditions[0].rightFieldId': 'Поле не принадлежит объекту этой стороны связи (id -11)',
      'filters[0].values': 'size must be 2',
      'filters[1].values[0]': 'Ошибка в выражении: значение фильтра №1 «x» не является числом',
      'parameters[0].name': 'Имя уже используется вычисляемым полем',
    });
  });

  it('builds derived formulas with unit and extra arguments', async () => {
    const id = await newDataset();
    const res = await put(id, {
      ...emptySchema,
      objects: [{ id: -1, data_source_id: sourceId, table: 'orders' }],
      fields: [
        { id: -1, object_id: -1, column: 'created_at', primitive_type: 'date' },
        { id: -2, object_id: -1, column: 'amount', primitive_type: 'float' },
        { id: -3, name: 'Месяц', derivation: { field_id: -1, function: 'datetrunc', args: ['month'] } },
        { id: -4, name: 'Округлено', derivation: { field_id: -2, function: 'ROUND', args: [2] } },
        { id: -5, name: 'Год месяца', derivation: { field_id: -3, function: 'YEAR' } },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const f = ok<DatasetDetails>(res).fields;
    expect(byName(f, 'Месяц')).toMatchObject({
      formula: "DATETRUNC('month', [orders.created_at])",
      primitive_type: 'date',
      derivation: { function: 'DATETRUNC', args: ['month'] },
    });
    expect(byName(f, 'Округлено')).toMatchObject({ formula: 'ROUND([orders.amount], 2)', primitive_type: 'float' });
    expect(byName(f, 'Год месяца')).toMatchObject({ formula: 'YEAR([Месяц])', primitive_type: 'integer' });
  });

  it('writes nothing when a save fails: the dataset reads exactly as before', async () => {
    const id = await newDataset();
    const before = await savedShop(id);
    const body = bodyOf(before);
    // Many valid changes and one bad reference at the end.
    byName(body.fields, 'city').title = 'Изменено';
    body.fields = body.fields.filter((f) => f.name !== 'Средний чек');
    body.fields.push({ id: -1, name: 'Новое', formula: '1' });
    body.objects.push({ id: -3, data_source_id: sourceId, table: 'extra' });
    body.parameters = [];
    body.filters[0].field_id = 987654;
    const res = await put(id, body);
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({ 'filters[0].fieldId': fieldNotFound(987654) });
    expect(await get(id)).toEqual(before);
  });

  it('accepts SQL objects and stores them without a trailing semicolon', async () => {
    // The editor wrote this source, so they may write SQL on it (see «SQL objects» below).
    const ownSource = await insertSource(t.deps, cast.workspaceId, { authorId: cast.users.editor.id });
    const id = (await createDataset(api, editor, { workspace_id: cast.workspaceId, data_source_ids: [ownSource] }))
      .id as number;
    const res = await put(id, {
      ...emptySchema,
      objects: [
        {
          id: -1,
          data_source_id: ownSource,
          kind: 'sql',
          name: 'big',
          sql: 'SELECT * FROM orders WHERE amount > 100;',
        },
      ],
      fields: [{ id: -2, object_id: -1, column: 'amount', primitive_type: 'float' }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ok<DatasetDetails>(res).objects[0]).toMatchObject({
      kind: 'sql',
      sql: 'SELECT * FROM orders WHERE amount > 100',
      table: null,
      schema: null,
    });
  });

  it('answers a malformed body with 422, never 500', async () => {
    const id = await newDataset();
    expect((await put(id, { ...emptySchema, fields: 'x' })).status).toBe(422);
    const missing = await put(id, { objects: [] });
    expect(missing.status).toBe(422);
    expect(failure(missing).errors).toMatchObject({ fields: 'must not be null' });
    const extra = await put(id, { ...emptySchema, extra: 1 });
    expect(failure(extra).errors).toEqual({ extra: 'unknown field' });
    const deep = await put(id, { ...emptySchema, fields: [{ id: -1, name: 'x', formula: '('.repeat(5000) }] });
    expect(deep.status).toBe(422);
    expect(failure(deep).errors!['fields[0].formula']).toMatch(/^Ошибка в выражении/);
  });

  it('lets the author and workspace administrators save; hides the dataset from non-members', async () => {
    const id = await newDataset();
    const statuses: Record<string, number> = {};
    for (const role of ['anonymous', 'plain', 'viewer', 'editor', 'wsAdmin', 'manager', 'sysadmin'] as const) {
      // Without a token the answer is 401 even for a body that would not validate.
      const body = role === 'anonymous' ? { bad: true } : emptySchema;
      statuses[role] = (await api.put(`/api/dataset/${id}/schema`, body, cast.tokens[role])).status;
    }
    expect(statuses).toEqual({
      anonymous: 401,
      plain: 404,
      viewer: 403,
      editor: 200,
      wsAdmin: 200,
      manager: 404,
      sysadmin: 403,
    });
    const notFound = await put(id, emptySchema, cast.tokens.plain);
    expect(failure(notFound).message).toBe(`Датасет не найден (id ${id})`);
    // Another editor of the workspace is not the owner.
    const byAdmin = (
      await createDataset(api, cast.tokens.wsAdmin!, { workspace_id: cast.workspaceId, data_source_ids: [sourceId] })
    ).id;
    expect((await put(byAdmin, emptySchema)).status).toBe(403);
    expect((await put(999999, emptySchema)).status).toBe(404);
  });
});

describe('POST /api/dataset/{id}/schema/validate', () => {
  it('answers the same 422s as the save and saves nothing', async () => {
    const id = await newDataset();
    const before = await savedShop(id);
    const body = bodyOf(before);
    const yearAt = body.fields.findIndex((f) => f.name === 'Год');
    body.fields[yearAt].formula = 'x';
    const bad = await validate(id, body);
    expect(bad.status).toBe(422);
    expect(failure(bad).errors).toEqual({ [`fields[${yearAt}].formula`]: DERIVED_FORMULA });
    const missing = await validate(id, { ...emptySchema, fields: [{ name: 'x', formula: '1' }] });
    expect(failure(missing).errors).toEqual({ 'fields[0].id': ID_REQUIRED });

    body.fields[yearAt].formula = null;
    body.fields.push({ id: -1, name: 'Новое', formula: '[Выручка] * 2' });
    body.objects = body.objects.slice(0, 1);
    body.fields = body.fields.filter((f) => f.object_id == null || f.object_id === body.objects[0].id);
    body.relations = [];
    body.hierarchies = [];
    body.filters = [];
    const valid = await validate(id, body);
    expect(valid.status, JSON.stringify(valid.body)).toBe(200);
    expect(ok<z.output<typeof validateSchemaOutput>>(valid).valid).toBe(true);
    expect(ok<z.output<typeof validateSchemaOutput>>(valid).fields.find((f) => f.id === -1)).toEqual({
      id: -1,
      name: 'Новое',
      kind: 'calculated',
      formula: '[Выручка] * 2',
      primitive_type: 'float',
    });
    expect(await get(id)).toEqual(before);
  });

  it('needs the same rights as the save', async () => {
    const id = await newDataset();
    expect((await validate(id, emptySchema, cast.tokens.viewer)).status).toBe(403);
    expect((await validate(id, emptySchema, cast.tokens.plain)).status).toBe(404);
    expect((await api.post(`/api/dataset/${id}/schema/validate`, emptySchema)).status).toBe(401);
    expect((await validate(id, emptySchema, cast.tokens.wsAdmin)).status).toBe(200);
  });
});

describe('SQL objects: only an owner of the source writes their SQL', () => {
  const SQL_OWNER_ONLY = 'SQL-запрос в датасете может задать только владелец источника';
  let adminSource: number;
  let otherSource: number;
  let editorSource: number;

  beforeAll(async () => {
    // Owned by the workspace administrator (its author); the editor can read it but does not own it.
    adminSource = await insertSource(t.deps, cast.workspaceId, { authorId: cast.users.wsAdmin.id });
    // Nobody's: only the workspace administrator owns it.
    otherSource = await insertSource(t.deps, cast.workspaceId);
    editorSource = await insertSource(t.deps, cast.workspaceId, { authorId: cast.users.editor.id });
  });

  const sqlSchema = (sourceId: number, sql = 'SELECT id, amount FROM orders') => ({
    ...emptySchema,
    objects: [{ id: -1, data_source_id: sourceId, kind: 'sql', name: 'q', sql }],
    fields: [{ id: -2, object_id: -1, column: 'amount', primitive_type: 'float' }],
  });
  /** A dataset of the editor on the given sources. */
  const editorsDataset = async (...sources: number[]) =>
    (await createDataset(api, editor, { workspace_id: cast.workspaceId, data_source_ids: sources })).id as number;

  it('refuses a new SQL object on a source the dataset owner does not own, with the other problems, also in validate', async () => {
    const id = await editorsDataset(adminSource);
    const body = sqlSchema(adminSource);
    body.fields.push({ id: -3, object_id: 999, column: 'x', primitive_type: 'float' });
    const res = await put(id, body);
    expect(res.status).toBe(422);
    expect(failure(res).errors).toEqual({
      'objects[0].sql': SQL_OWNER_ONLY,
      'fields[1].objectId': 'Объект датасета не найден (id 999)',
    });
    const checked = await validate(id, sqlSchema(adminSource));
    expect(checked.status).toBe(422);
    expect(failure(checked).errors).toEqual({ 'objects[0].sql': SQL_OWNER_ONLY });
    expect((await get(id)).objects).toEqual([]);
    // A table object on the same source stays the dataset owner's business.
    const table = await put(id, {
      ...emptySchema,
      objects: [{ id: -1, data_source_id: adminSource, table: 'orders' }],
    });
    expect(table.status, JSON.stringify(table.body)).toBe(200);
  });

  it('lets the source owner add one: its author with an editing role, or an administrator of the workspace', async () => {
    const mine = await editorsDataset(editorSource);
    expect((await put(mine, sqlSchema(editorSource))).status).toBe(200);
    // The administrator owns every source of the workspace and may save the editor's dataset.
    const id = await editorsDataset(otherSource);
    const res = await put(id, sqlSchema(otherSource), cast.tokens.wsAdmin);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ok<DatasetDetails>(res).objects[0]).toMatchObject({
      kind: 'sql',
      sql: 'SELECT id, amount FROM orders',
      data_source_id: otherSource,
    });
  });

  it('lets another dataset owner keep a saved SQL object, but not change its text or source or add another', async () => {
    const id = await editorsDataset(adminSource, otherSource, editorSource);
    const first = await put(id, sqlSchema(adminSource), cast.tokens.wsAdmin);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const saved = bodyOf(ok<DatasetDetails>(first));

    // The same object, its text untouched; a new title and a new table object around it.
    const keep = structuredClone(saved);
    keep.fields[0].title = 'Сумма';
    keep.objects.push({ id: -5, data_source_id: adminSource, name: 'orders', table: 'orders' });
    keep.objects[0].name = 'q2';
    const kept = await put(id, keep);
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    // Re-sent with a trailing semicolon and spaces: the stored text is the same.
    const again = bodyOf(ok<DatasetDetails>(kept));
    again.objects[0].sql = ' SELECT id, amount FROM orders ; ';
    expect((await put(id, again)).status).toBe(200);

    const changed = structuredClone(again);
    changed.objects[0].sql = 'SELECT id, amount FROM orders WHERE id > 0';
    expect(failure(await put(id, changed)).errors).toEqual({ 'objects[0].sql': SQL_OWNER_ONLY });
    const moved = structuredClone(again);
    moved.objects[0].data_source_id = otherSource;
    expect(failure(await put(id, moved)).errors).toEqual({ 'objects[0].sql': SQL_OWNER_ONLY });
    const tableToSql = structuredClone(again);
    const tableAt = tableToSql.objects.findIndex((o) => o.kind === 'table');
    Object.assign(tableToSql.objects[tableAt], { kind: 'sql', schema: null, table: null, sql: 'SELECT 1 AS one' });
    expect(failure(await put(id, tableToSql)).errors).toEqual({ [`objects[${tableAt}].sql`]: SQL_OWNER_ONLY });
    const added = structuredClone(again);
    added.objects.push({ id: -9, data_source_id: adminSource, kind: 'sql', name: 'more', sql: 'SELECT 1 AS one' });
    expect(failure(await put(id, added)).errors).toEqual({
      [`objects[${added.objects.length - 1}].sql`]: SQL_OWNER_ONLY,
    });
    // On a source the editor owns, they may add one next to it.
    const ownAdded = structuredClone(again);
    ownAdded.objects.push({ id: -9, data_source_id: editorSource, kind: 'sql', name: 'mine', sql: 'SELECT 1 AS one' });
    expect((await put(id, ownAdded)).status).toBe(200);

    // Nothing refused was written: the object still has the administrator's text on the administrator's source.
    expect(byName((await get(id)).objects, 'q2')).toMatchObject({
      kind: 'sql',
      sql: 'SELECT id, amount FROM orders',
      data_source_id: adminSource,
    });
    // Dropping the SQL object needs no source rights either.
    const dropped = await put(id, {
      ...emptySchema,
      objects: [{ id: -1, data_source_id: adminSource, table: 'orders' }],
    });
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(200);
  });
});
