import { z } from 'zod';
import { OBJECT_RIGHTS } from '../../server/access/object-access';
import { OBJECT_TYPE_NAMES } from '../../server/access/object-rights';
import { entityId } from '../common';

const id = entityId();

const objectType = z.enum(OBJECT_TYPE_NAMES, {
  error: `Неизвестный тип объекта: допустимы ${OBJECT_TYPE_NAMES.filter((t) => !t.includes('_')).join(', ')}`,
});
const right = z.enum(OBJECT_RIGHTS, { error: 'Право должно быть view или edit' });

export const objectInput = z.strictObject({ objectType, objectId: id });
export const userRightInput = z.strictObject({ objectType, objectId: id, userId: id, right });
export const groupRightInput = z.strictObject({ objectType, objectId: id, groupId: id, right });
export const userInput = z.strictObject({ objectType, objectId: id, userId: id });
export const groupInput = z.strictObject({ objectType, objectId: id, groupId: id });

export const rightItem = z.object({
  subject_type: z.enum(['user', 'group']),
  subject_id: z.number().int(),
  name: z.string().describe('Username of a user, name of a group'),
  right: z.enum(OBJECT_RIGHTS),
});
export const listRightsOutput = z.object({ items: z.array(rightItem) });
export const removedRightOutput = z.object({
  subject_type: z.enum(['user', 'group']),
  subject_id: z.number().int(),
  removed: z.literal(true),
});
