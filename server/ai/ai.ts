import {
  ChatProviderError,
  completeChat,
  type ChatMessage,
  type ChatProviderConfig,
} from '../../adapters/ai/chat-client';
import type { Actor } from '../auth/actor';
import type { AppDeps } from '../app/deps';
import { existingGroupIds } from '../groups/store';
import { AppError, badRequest, invalid } from '../kernel/errors';
import { AI_MSG } from './messages';
import { saveAiProvider, storedAiProvider, type StoredAiProvider } from './provider-settings';

/*
 * The AI provider administration (/api/admin/ai-provider) and who may use the assistant (/api/ai/access).
 * Every generation asks the provider through `askProvider`, which turns its failures into the error table's
 * 502 (an error answer, unreachable) and 504 (no answer in time): never a 500, never the provider's raw text.
 */

const MASK = '********';
const CHECK_TIMEOUT_MS = 15_000;

export interface AiProviderView {
  enabled: boolean;
  provider: string;
  base_url: string | null;
  model: string | null;
  api_key: string | null;
  api_key_set: boolean;
  allowed_group_ids: number[];
  timeout_ms: number;
}

export interface AiProviderChange {
  enabled?: boolean;
  provider?: string;
  base_url?: string | null;
  model?: string | null;
  /** Omitted: unchanged; null: cleared. */
  api_key?: string | null;
  allowed_group_ids?: number[];
  timeout_ms?: number;
}

function viewOf(s: StoredAiProvider): AiProviderView {
  return {
    enabled: s.enabled,
    provider: s.provider,
    base_url: s.base_url,
    model: s.model,
    api_key: s.api_key_sealed ? MASK : null,
    api_key_set: s.api_key_sealed !== null,
    allowed_group_ids: s.allowed_group_ids,
    timeout_ms: s.timeout_ms,
  };
}

/** GET /api/admin/ai-provider */
export async function getAiProvider(deps: AppDeps): Promise<AiProviderView> {
  return viewOf(await storedAiProvider(deps));
}

async function assertGroupsExist(deps: AppDeps, ids: number[]): Promise<void> {
  if (!ids.length) return;
  const known = await existingGroupIds(deps.db, ids);
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length) throw invalid({ allowedGroupIds: `groups not found: ${missing.join(', ')}` });
}

function merged(s: StoredAiProvider, change: AiProviderChange, seal: (v: string) => string): StoredAiProvider {
  const next: StoredAiProvider = { ...s };
  if (change.enabled !== undefined) next.enabled = change.enabled;
  if (change.provider !== undefined) next.provider = change.provider;
  if (change.base_url !== undefined) next.base_url = change.base_url;
  if (change.model !== undefined) next.model = change.model;
  if (change.api_key !== undefined) next.api_key_sealed = change.api_key === null ? null : seal(change.api_key);
  if (change.allowed_group_ids !== undefined) next.allowed_group_ids = [...new Set(change.allowed_group_ids)];
  if (change.timeout_ms !== undefined) next.timeout_ms = change.timeout_ms;
  return next;
}

/** PUT /api/admin/ai-provider: enabling needs a base_url and a model. */
export async function updateAiProvider(deps: AppDeps, change: AiProviderChange): Promise<AiProviderView> {
  if (change.allowed_group_ids) await assertGroupsExist(deps, change.allowed_group_ids);
  const next = merged(await storedAiProvider(deps), change, (v) => deps.secretBox.seal(v));
  if (next.enabled && (!next.base_url || !next.model)) {
    throw invalid(
      {
        ...(next.base_url ? {} : { baseUrl: 'must not be blank' }),
        ...(next.model ? {} : { model: 'must not be blank' }),
      },
      AI_MSG.notConfigured,
    );
  }
  await saveAiProvider(deps, next);
  return viewOf(next);
}

function configOf(deps: AppDeps, s: StoredAiProvider): ChatProviderConfig | null {
  if (!s.base_url || !s.model) return null;
  return {
    baseUrl: s.base_url,
    model: s.model,
    apiKey: s.api_key_sealed ? deps.secretBox.open<string>(s.api_key_sealed) : '',
    timeoutMs: s.timeout_ms,
  };
}

function failureOf(err: unknown, timeoutMs: number): AppError {
  if (!(err instanceof ChatProviderError)) throw err;
  switch (err.kind) {
    case 'timeout':
      return new AppError('gateway_timeout', AI_MSG.timeout(timeoutMs), { cause: err });
    case 'http':
      return new AppError('bad_gateway', AI_MSG.http(err.status), { cause: err });
    case 'empty':
      return new AppError('bad_gateway', AI_MSG.empty, { cause: err });
    case 'malformed':
      return new AppError('bad_gateway', AI_MSG.malformed, { cause: err });
    default:
      return new AppError('bad_gateway', AI_MSG.connection, { cause: err });
  }
}

/**
 * POST /api/admin/ai-provider/check: one real completion with the saved settings and the overrides (not saved);
 * ok/message, never an error status for a provider that fails.
 */
export async function checkAiProvider(
  deps: AppDeps,
  overrides: AiProviderChange,
): Promise<{ ok: boolean; message: string }> {
  const s = merged(await storedAiProvider(deps), overrides, (v) => deps.secretBox.seal(v));
  const saved = configOf(deps, s);
  if (!saved) return { ok: false, message: AI_MSG.notConfigured };
  // A check is a ping: it waits at most CHECK_TIMEOUT_MS whatever the generations may wait.
  const config = { ...saved, timeoutMs: Math.min(saved.timeoutMs, CHECK_TIMEOUT_MS) };
  try {
    await completeChat(config, [{ role: 'user', content: 'Ответь одним словом: ok' }]);
    return { ok: true, message: AI_MSG.checkOk };
  } catch (err) {
    const failure = failureOf(err, config.timeoutMs);
    const detail = err instanceof ChatProviderError && err.kind !== 'timeout' ? `: ${err.message}` : '';
    return { ok: false, message: `${failure.message}${detail}`.slice(0, 500) };
  }
}

function refusal(s: StoredAiProvider, actor: Actor): string | null {
  if (!s.enabled) return AI_MSG.disabled;
  if (!s.base_url || !s.model) return AI_MSG.notConfigured;
  if (s.allowed_group_ids.length && !s.allowed_group_ids.some((g) => actor.groupIds.includes(g))) {
    return AI_MSG.notInGroup;
  }
  return null;
}

/** GET /api/ai/access: enabled, and the reason when not. */
export async function aiAccess(deps: AppDeps, actor: Actor): Promise<{ enabled: boolean; reason: string | null }> {
  const reason = refusal(await storedAiProvider(deps), actor);
  return { enabled: reason === null, reason };
}

/** One completion for a generation: 403 with the reason when the caller may not use the assistant. */
async function askProvider(deps: AppDeps, actor: Actor, messages: ChatMessage[]): Promise<string> {
  const s = await storedAiProvider(deps);
  const reason = refusal(s, actor);
  if (reason) throw new AppError('forbidden', reason);
  const config = configOf(deps, s)!;
  try {
    return await completeChat(config, messages);
  } catch (err) {
    throw failureOf(err, config.timeoutMs);
  }
}

/** What a generation makes of one answer: the accepted result, or why it was refused. */
export type Judged<T> = { accepted: T } | { problem: string };

/**
 * Asks, judges the answer (without its Markdown fence), and on a refusal asks once more with the reason (one repair
 * round, as every generation of POST /api/ai/... promises); a second refusal is a 400 with the reason.
 */
export async function askUntilAccepted<T>(
  deps: AppDeps,
  actor: Actor,
  messages: ChatMessage[],
  judge: (answer: string) => Judged<T>,
  repair: (problem: string) => string,
  failed: (problem: string) => string,
): Promise<T> {
  let problem = '';
  for (let round = 0; round < 2; round++) {
    const answer = await askProvider(deps, actor, messages);
    const judged = judge(stripFence(answer));
    if ('accepted' in judged) return judged.accepted;
    problem = judged.problem;
    messages.push({ role: 'assistant', content: answer }, { role: 'user', content: repair(problem) });
  }
  throw badRequest(failed(problem));
}

/** The answer's text without a Markdown fence around it (models often add one). */
function stripFence(text: string): string {
  const fenced = /```[a-zA-Z]*\s*\n?([\s\S]*?)```/.exec(text);
  return (fenced ? fenced[1] : text).trim();
}
