// Settings → Model: the provider and model new sessions use, the API base and key (the key is
// write-only: the server says only whether one is set), and a test call before or after saving.

import { useEffect, useState } from "react";
import { api } from "../api";
import { MIN_THINKING_BUDGET, PROVIDERS, joinModel, splitModel, type ModelSettings, type ModelTest, type ProviderId } from "../modelSettings";
import { useAppState } from "../store";
import "../person.css";

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function ModelSection() {
  const state = useAppState();
  const admin = state.me?.role === "admin";
  const [current, setCurrent] = useState<ModelSettings | null>(null);
  const [provider, setProvider] = useState<ProviderId>("anthropic");
  const [name, setName] = useState("");
  const [apiBase, setApiBase] = useState("");
  const [apiKey, setApiKey] = useState("");
  const [clearKey, setClearKey] = useState(false);
  const [thinking, setThinking] = useState(false);
  const [budget, setBudget] = useState(String(4096));
  const [busy, setBusy] = useState<"save" | "test" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [test, setTest] = useState<ModelTest | null>(null);
  // The values of the last test that passed: Save tests again only what changed since.
  const [passed, setPassed] = useState<string | null>(null);
  // Save's own test failed: the person may still save these values, knowingly.
  const [offerAnyway, setOfferAnyway] = useState(false);

  const show = (settings: ModelSettings) => {
    setCurrent(settings);
    const [p, n] = splitModel(settings.model);
    setProvider(p);
    setName(n);
    setApiBase(settings.api_base ?? "");
    setApiKey("");
    setClearKey(false);
    setThinking(settings.thinking.enabled);
    setBudget(String(settings.thinking.budget_tokens));
  };
  useEffect(() => {
    api.modelSettings().then(show, (e: unknown) => setError(message(e)));
  }, []);

  const budgetTokens = Number(budget);
  const budgetError =
    thinking && !(Number.isInteger(budgetTokens) && budgetTokens >= MIN_THINKING_BUDGET)
      ? `A whole number of tokens, at least ${MIN_THINKING_BUDGET}.`
      : null;

  const body = () => ({
    model: joinModel(provider, name),
    api_base: apiBase.trim() || null,
    api_key: apiKey.trim() || null,
    clear_api_key: clearKey,
    // Off keeps the budget last saved, so turning it back on finds it again.
    thinking: { enabled: thinking, budget_tokens: budgetError ? (current?.thinking.budget_tokens ?? 4096) : budgetTokens },
  });

  /** Save tests the connection first (unless these values just passed a test, or the person
   * chose "Save anyway"); a failed test is shown once, as the test's result, and nothing is saved. */
  const save = async (event: { preventDefault(): void }, demo = false, anyway = false) => {
    event.preventDefault();
    setBusy("save");
    setError(null);
    setSaved(null);
    setOfferAnyway(false);
    try {
      const values = JSON.stringify(body());
      if (!demo && !anyway && values !== passed) {
        setTest(null);
        const result = await api.testModel(body());
        setTest(result);
        if (!result.ok) {
          setOfferAnyway(true);
          return;
        }
        setPassed(values);
      }
      const settings = await api.saveModelSettings(demo ? { model: null, api_base: null } : body());
      show(settings);
      setSaved(settings.demo ? "Saved: new sessions play the offline demo." : `Saved: new sessions use ${settings.model}.`);
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(null);
    }
  };

  const runTest = async () => {
    setBusy("test");
    setError(null);
    setTest(null);
    try {
      const result = await api.testModel(body());
      setTest(result);
      setPassed(result.ok ? JSON.stringify(body()) : null);
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(null);
    }
  };

  const example = PROVIDERS.find((p) => p.id === provider)?.example ?? "";
  return (
    <section className="settings-section" aria-labelledby="model-heading" data-testid="model-section">
      <div className="section-head">
        <h2 id="model-heading">Model</h2>
      </div>
      {current === null ? (
        <p className="muted">{error ?? "Loading…"}</p>
      ) : (
        <>
          <p data-testid="model-in-use">
            {current.demo ? (
              <>
                In use: <strong>the offline demo</strong>, a scripted model that shows what an agent does (it lists the
                workspace, writes <code>notes.txt</code> after asking you, and runs <code>wc -l</code>). Choose a model
                below to leave it.
              </>
            ) : (
              <>
                In use: <code>{current.model}</code>
                {current.api_base && (
                  <>
                    {" "}at <code>{current.api_base}</code>
                  </>
                )}
                {current.source === "config" && <span className="muted"> (from the configuration)</span>}
              </>
            )}
          </p>
          {!admin && <p className="muted">Only an admin can change the model.</p>}
          <form className="server-form" onSubmit={(e) => void save(e)} aria-label="Model" data-testid="model-form">
            <div className="server-form-grid">
              <label>
                Provider
                <select
                  data-testid="model-provider"
                  value={provider}
                  disabled={!admin}
                  onChange={(e) => setProvider(e.target.value as ProviderId)}
                >
                  {PROVIDERS.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.label}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Model
                <input
                  data-testid="model-name"
                  value={name}
                  disabled={!admin}
                  spellCheck={false}
                  placeholder={example}
                  onChange={(e) => setName(e.target.value)}
                />
              </label>
              <label>
                API base <span className="muted small">empty: the provider's own</span>
                <input
                  data-testid="model-api-base"
                  value={apiBase}
                  disabled={!admin}
                  spellCheck={false}
                  placeholder="https://…/v1"
                  onChange={(e) => setApiBase(e.target.value)}
                />
              </label>
              <label>
                API key{" "}
                <span className="muted small" data-testid="model-key-state">
                  {current.api_key_set ? "set; type to replace it" : "not set"}
                </span>
                <input
                  data-testid="model-api-key"
                  type="password"
                  autoComplete="off"
                  value={apiKey}
                  disabled={!admin || clearKey}
                  placeholder={current.api_key_set ? "••••••••" : "sk-…"}
                  onChange={(e) => setApiKey(e.target.value)}
                />
              </label>
            </div>
            <fieldset className="thinking-settings" data-testid="model-thinking">
              <legend>Extended thinking</legend>
              <label className="inline-check">
                <input
                  type="checkbox"
                  data-testid="model-thinking-enabled"
                  checked={thinking}
                  disabled={!admin}
                  onChange={(e) => setThinking(e.target.checked)}
                />
                Let the model think before it answers (models that support it)
              </label>
              <label>
                Budget <span className="muted small">tokens it may spend thinking</span>
                <input
                  data-testid="model-thinking-budget"
                  type="number"
                  min={MIN_THINKING_BUDGET}
                  step={1}
                  value={budget}
                  disabled={!admin || !thinking}
                  aria-invalid={budgetError !== null}
                  aria-describedby={budgetError ? "thinking-budget-error" : undefined}
                  onChange={(e) => setBudget(e.target.value)}
                />
              </label>
              {budgetError && (
                <span className="error-text small" id="thinking-budget-error" data-testid="model-thinking-error">
                  {budgetError}
                </span>
              )}
              <p className="muted small">
                Its reasoning shows, collapsed, above each answer; it is never sent back to the model. Anthropic models get this
                budget; others the matching reasoning effort.
              </p>
            </fieldset>
            {current.api_key_set && admin && (
              <label className="inline-check">
                <input type="checkbox" data-testid="model-clear-key" checked={clearKey} onChange={(e) => setClearKey(e.target.checked)} />
                Remove the key
              </label>
            )}
            <p className="muted small">
              Saved in the data folder, readable only by you; the key is never shown again. New sessions use it at once.
            </p>
            {error && (
              <p className="error-text" role="alert" data-testid="model-error">
                {error}
              </p>
            )}
            {test && (
              <p className={test.ok ? "ok-text" : "error-text"} role="status" data-testid="model-test-result" data-ok={test.ok}>
                {test.ok ? "✓ " : "✗ "}
                {test.message}
                {test.latency_ms > 0 && <span className="muted"> ({test.latency_ms} ms)</span>}
              </p>
            )}
            {saved && (
              <p className="muted" role="status" data-testid="model-saved">
                {saved}
              </p>
            )}
            {admin && (
              <div className="actions">
                <button type="submit" className="btn primary" data-testid="model-save" disabled={busy !== null || budgetError !== null}>
                  {busy === "save" ? "Testing, then saving…" : "Save"}
                </button>
                {offerAnyway && (
                  <button
                    type="button"
                    className="btn danger"
                    data-testid="model-save-anyway"
                    disabled={busy !== null || budgetError !== null}
                    onClick={(e) => void save(e, false, true)}
                  >
                    Save anyway
                  </button>
                )}
                <button type="button" className="btn" data-testid="model-test" disabled={busy !== null} onClick={() => void runTest()}>
                  {busy === "test" ? "Testing…" : "Test connection"}
                </button>
                {!current.demo && (
                  <button type="button" className="btn subtle" data-testid="model-use-demo" disabled={busy !== null} onClick={(e) => void save(e, true)}>
                    Use the offline demo
                  </button>
                )}
              </div>
            )}
          </form>
        </>
      )}
    </section>
  );
}
