// The model settings as the API sends and takes them, and the providers the form offers.

import type { Schemas, Sent } from "./types";

/** Extended thinking for models that support it; the budget is in tokens (1024 at least). */
export type ThinkingSettings = Sent<Schemas["ThinkingConfig"]>;

export const MIN_THINKING_BUDGET = 1024;

/** What is in use; the key itself never comes back, only whether one is set. */
export type ModelSettings = Sent<Schemas["ModelSettingsOut"]>;

/** A choice to save or test. An empty model is the offline demo; an empty key keeps the one set;
 * no thinking keeps the thinking setting in use. */
export type ModelSettingsBody = Schemas["ModelSettingsIn"];

export type ModelTest = Sent<Schemas["ConnectionTestOut"]>;

/** LiteLLM's provider prefixes the form offers; "other" takes a full `provider/model` name. */
export const PROVIDERS = [
  { id: "anthropic", label: "Anthropic", example: "claude-sonnet-4-5" },
  { id: "openai", label: "OpenAI (or any OpenAI-compatible server)", example: "gpt-4o" },
  { id: "openrouter", label: "OpenRouter", example: "anthropic/claude-sonnet-4-5" },
  { id: "gemini", label: "Google Gemini", example: "gemini-2.5-pro" },
  { id: "ollama", label: "Ollama (local)", example: "llama3.1" },
  { id: "other", label: "Other (a full LiteLLM name)", example: "bedrock/anthropic.claude-3-5-sonnet" },
] as const;

export type ProviderId = (typeof PROVIDERS)[number]["id"];

/** `openai/gpt-4o` → ["openai", "gpt-4o"]; a prefix the form does not offer → ["other", whole]. */
export function splitModel(model: string | null): [ProviderId, string] {
  if (!model) return ["anthropic", ""];
  const slash = model.indexOf("/");
  const prefix = slash > 0 ? model.slice(0, slash) : "";
  const known = PROVIDERS.find((p) => p.id === prefix && p.id !== "other");
  return known ? [known.id, model.slice(slash + 1)] : ["other", model];
}

export function joinModel(provider: ProviderId, name: string): string | null {
  const trimmed = name.trim();
  if (!trimmed) return null;
  return provider === "other" ? trimmed : `${provider}/${trimmed}`;
}
