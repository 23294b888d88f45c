// How the real reviewer CLIs are pointed at the mock model API and nowhere else (shared/reference/real-reviewer-clis.md
// §2.1, §3.1): the e2e harness (_harness.ts) and bench/round-cost.mjs both use these.

/** The key Codex sends the mock (its provider's `env_key`). */
export const MOCK_OPENAI_KEY = 'sk-mock-openai'

/** Everything Claude Code needs to talk only to the mock. */
export function claudeVars(port) {
  return {
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    ANTHROPIC_API_KEY: 'sk-ant-mock',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  }
}

/** `$CODEX_HOME/config.toml` pointing Codex at the mock, with every retry and background call off. */
export function codexConfigToml(port) {
  return `model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock (loopback)"
base_url = "http://127.0.0.1:${port}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 20000

[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false
unbounded_connection_retries = false

[analytics]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"
`
}
