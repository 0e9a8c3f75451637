import type OpenAI from 'openai';

/*
 * The AI provider client: OpenAI-compatible chat completions (OpenAI, Azure OpenAI's /openai/v1 endpoint, Ollama,
 * vLLM and the gateways that speak the same protocol) through the official `openai` package. It knows nothing of
 * the platform: the assistant (server/ai) decides the prompts and turns these failures into the envelope's errors.
 */

export interface ChatProviderConfig {
  baseUrl: string;
  model: string;
  /** Empty for providers that take none (a local Ollama): a placeholder is sent, as those ignore the header. */
  apiKey: string;
  timeoutMs: number;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * timeout: no answer in time; http: the provider answered an error status; connection: unreachable; malformed: a
 * success answer that is no chat completion (not JSON, no choices: a proxy's page, another protocol); empty: no text.
 */
export type ChatErrorKind = 'timeout' | 'http' | 'connection' | 'malformed' | 'empty';

export class ChatProviderError extends Error {
  constructor(
    message: string,
    readonly kind: ChatErrorKind,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ChatProviderError';
  }
}

function providerError(OpenAI: typeof import('openai').default, err: unknown): ChatProviderError {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new ChatProviderError(err.message, 'timeout');
  if (err instanceof OpenAI.APIConnectionError) return new ChatProviderError(err.message, 'connection');
  if (err instanceof OpenAI.APIError) return new ChatProviderError(err.message, 'http', err.status);
  // The SDK parses a JSON-typed success body itself: a body that is no JSON fails there.
  if (err instanceof SyntaxError) return new ChatProviderError(err.message, 'malformed');
  return new ChatProviderError(err instanceof Error ? err.message : String(err), 'connection');
}

/** One completion: the text of the first choice. No retries: the caller's request is waiting. */
export async function completeChat(config: ChatProviderConfig, messages: ChatMessage[]): Promise<string> {
  // The SDK loads on the first question, not with the server.
  const { default: OpenAI } = await import('openai');
  const client: OpenAI = new OpenAI({
    baseURL: config.baseUrl,
    apiKey: config.apiKey || 'none',
    timeout: config.timeoutMs,
    maxRetries: 0,
  });
  let text: string | null | undefined;
  try {
    const answer = await client.chat.completions.create({ model: config.model, messages, temperature: 0 });
    // A body of another type comes back as text: no completion either.
    if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.choices)) {
      throw new ChatProviderError('the answer is not a chat completion', 'malformed');
    }
    text = answer.choices[0]?.message?.content;
  } catch (err) {
    throw err instanceof ChatProviderError ? err : providerError(OpenAI, err);
  }
  if (typeof text !== 'string' || !text.trim()) throw new ChatProviderError('no text in the completion', 'empty');
  return text;
}
