import { badRequest, notFound } from '../kernel/errors';

/** Messages of the pipeline area: the specification's own texts first, then ours in the same voice. */
export const MSG = {
  /** PUT /api/pipeline/{id}/stage/{order} with a personal workspace. */
  sharedOnly: 'К стадии можно привязать только командное пространство',
  /** PUT /api/pipeline/{id}/stage/{order} with a workspace bound to a stage already (this or another pipeline). */
  workspaceTaken: 'Пространство уже участвует в другом пайплайне',
  /** Not in the specification: the workspace is bound to another stage of this same pipeline. */
  sameWorkspaceTwice: 'Пространство уже привязано к другой стадии этого пайплайна',
  /** GET /api/pipeline/{id}/available-workspaces with nothing to offer. */
  noFreeWorkspace: 'Нет свободного командного пространства, где вы администратор',
  /** GET /api/pipeline/{id}/compare with from=2 or a non-adjacent pair. */
  adjacentOnly: 'Сравнить можно только с соседней стадией',
  /** POST /api/pipeline/{id}/deploy: any failure, with the reason after a colon. */
  nothingDeployed: 'Ничего не развёрнуто',
  /** The UI hints that disable Развернуть, answered as 400s by the API. */
  bothStagesBound: 'Обе стадии должны быть привязаны к пространствам',
  selectObjects: 'Выберите объекты в левой колонке',
  /** Not in the specification: an action on a stage that has no workspace. */
  stageNotBound: (order: number) => `Стадия не привязана к пространству (order ${order})`,
  /** Data-source substitution rules on stage 0: nothing precedes it. */
  firstStageHasNoRules: 'У первой стадии нет правил подстановки: перед ней нет стадии',
  ruleNotFound: (uuid: string) => `Правило подстановки не найдено (source_uuid ${uuid})`,
  sourceNotInPreviousStage: (uuid: string) => `Источник не найден в предыдущей стадии (source_uuid ${uuid})`,
  /** A rule for a file source: the file is copied with its source, it has no connection to substitute. */
  ruleNotNeeded: 'Файловому источнику правило подстановки не нужно: файл копируется вместе с источником',
};

export const nothingDeployedBecause = (reason: string) => `${MSG.nothingDeployed}: ${reason}`;

export const pipelineNotFound = (id: number) => notFound(`Пайплайн не найден (id ${id})`);
export const stageNotFound = (order: number) => notFound(`Стадия пайплайна не найдена (order ${order}): есть 0, 1, 2`);
export const stageNotBound = (order: number) => badRequest(MSG.stageNotBound(order));
