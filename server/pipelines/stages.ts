/** The three stages of every pipeline: fixed names, so they are not stored (spec: Pipeline, Limits). */
export const STAGE_NAMES = ['Разработка', 'Тест', 'Прод'] as const;
const STAGE_COUNT = STAGE_NAMES.length;

export const isStageOrder = (order: number): boolean => Number.isInteger(order) && order >= 0 && order < STAGE_COUNT;
