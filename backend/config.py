"""Settings: environment (`OVERSEER_*`) over `overseer.yaml` over defaults.

`overseer.yaml` is the one `$OVERSEER_CONFIG` names, else the current directory's if a person
trusted it (backend/workspace_trust.py: the agent may have written it), else the data dir's.
`${VAR}` and `${VAR:-default}` are expanded in it before validation, so secrets stay in the
environment.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from backend.sandbox.config import SandboxConfig
from backend.domain.hook_config import HooksConfig
from backend.host_identity import check_host_id, default_host_id
from backend.mcp.config import McpServerConfig, check_not_builtin
from backend.config_file import (  # re-exported: the file's readers and writers import them from here
    CONFIG_FILE_NAME,
    ConfigError,
    FoundConfig,
    append_allow_rules,
    default_data_dir,
    expand_vars,
    find_config_file,
    parse_yaml,
    read_yaml,
    update_config_file,
    workspace_config,
)
from backend.config_sections import (  # re-exported: importers of the config find them here
    BudgetConfig,
    CheckpointsConfig,
    HeartbeatConfig,
    NotifyConfig,
    PushTarget,
    Seconds,
    TelegramConfig,
    ThinkingConfig,
    ToolSelectionConfig,
    seconds_of,
)
from backend.paths import private_dir
from backend.workspace_trust import TrustStore


PolicyValue = Literal["always_allow", "ask", "deny"]

# Limits on waiting for a model (issue 13, item 12: a hung server showed nothing for up to
# 4 x 600 s). 120 s to the first streamed chunk leaves room for a reasoning model that thinks
# before it streams and for a provider's queue under load. 90 s of silence mid-stream is far
# beyond the pauses of a live stream (tokens, thinking deltas and tool-call pieces come seconds
# apart; Claude Code's own stream watchdog also waits 90 s) yet notices a dead connection soon.
# Silence is measured on the chunks LiteLLM yields, so keep-alive pings do not count as life.
# A live stream has no total limit. Worst case for a model that never answers:
# (model_retries + 1) x model_request_timeout plus the backoff, per model tried: with the
# defaults 4 x 120 s + 7 s, about 8 min, with a retry event naming the tripped limit every 2 min.
MODEL_REQUEST_TIMEOUT = 120.0
MODEL_STREAM_SILENCE_TIMEOUT = 90.0


PermissionMode = Literal["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"]
"""Claude Code's permission modes (`permissions.defaultMode`); backend/rules/permission_modes.py maps them."""


# Modes with no safe counterpart here: refused at load, saying what to write instead.
_REFUSED_MODES: dict[str, str] = {
    "bypassPermissions": (
        "Overseer never runs a tool without an allow decision. Allow tools with `permissions.allow` "
        "rules, turn on a session's auto-approve, or run `overseer run --approve all` (each is recorded, "
        "and a deny rule or the managed policy still holds)"
    ),
    "dontAsk": (
        "a call no rule allows waits for a person here. List what may run in `permissions.allow` "
        "and what may not in `permissions.deny`"
    ),
    "auto": "it needs Claude Code's safety classifier, which Overseer does not have. Use acceptEdits or default",
}


class PermissionsConfig(BaseModel):
    """Claude Code's `permissions` block: rule strings by effect, and its two settings.

    The settings keep Claude Code's camelCase names, so a pasted block loads as it is
    (issue 35, item 11); what each means here is in backend/rules/permission_modes.py.
    """

    model_config = ConfigDict(extra="forbid")
    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    after_untrusted: Literal["ask", "off"] = "off"
    """`ask`: once a result of outside text (a page, a fetched URL, an untrusted server) entered a
    session, every call that could send data out asks for the rest of it (issue 34, item 5)."""
    defaultMode: PermissionMode | None = None
    """`acceptEdits`: file edits inside a session's workspace are allowed; `plan`: new sessions start
    in the plan mode; `default`: as without it. `auto`, `dontAsk` and `bypassPermissions` are refused."""
    additionalDirectories: list[str] = Field(default_factory=list)
    """More folders sessions may work in: added to `workspace_roots`."""
    disableBypassPermissionsMode: Literal["disable"] | None = None
    """Accepted as Claude Code writes it; bypassPermissions is refused here anyway."""

    @field_validator("defaultMode")
    @classmethod
    def _mode_overseer_has(cls, mode: PermissionMode | None) -> PermissionMode | None:
        if mode in _REFUSED_MODES:
            raise PydanticCustomError("permission_mode", f"defaultMode {mode!r} is refused: {_REFUSED_MODES[mode]}")
        return mode

    def as_written(self) -> dict[str, Any]:
        """The block as the config file keeps it: the rule lists, and the settings only when set."""
        return self.model_dump(exclude_defaults=True) | {e: getattr(self, e) for e in ("allow", "ask", "deny")}


class Settings(BaseSettings):
    """Everything Overseer can be configured with."""

    model_config = SettingsConfigDict(env_prefix="OVERSEER_", extra="forbid", populate_by_name=True)

    model: str | None = None
    """LiteLLM model name, e.g. `anthropic/claude-sonnet-4-5`. None: the offline demo model."""
    api_base: str | None = None
    api_key: SecretStr | None = None
    fallback_models: list[str] = Field(default_factory=list)
    expose_tools: bool = False
    """The MCP gateway (`/mcp`, `overseer mcp`) also re-exports the host's tools, through the gate."""
    default_engine: Literal["litellm", "claude-sdk"] = "litellm"
    """The engine of a session that names none: `litellm`, or `claude-sdk` (Claude Code's own loop)."""
    claude_sdk_setting_sources: list[Literal["user", "project", "local"]] = Field(default_factory=list)
    """Claude Code settings files the claude-sdk engine reads. None by default: the CLI then runs
    with a config dir and HOME under the data dir, blind to the person's own ~/.claude."""
    data_dir: Path = Field(default_factory=lambda: Path.home() / ".overseer")
    database_url: SecretStr | None = None
    """`postgresql://...`: keep everything in this PostgreSQL database, which several hosts may
    share, instead of `<data dir>/overseer.db` (SQLite, the default). A secret: it may hold a password."""
    host_id: str = ""
    """This host's stable name among the hosts of one database (DBOS executor id, logs, health).
    Unset: the id kept in `<data dir>/host_id`, else one derived from the machine and data dir."""
    database_pool_size: int = Field(default=10, ge=1)
    """With `database_url`: the most connections this host's store holds open at once. A host opens
    `database_pool_size + dbos_pool_size + 3` connections at most (listening, host watch, DBOS's
    own listener); every host's together must stay under the server's `max_connections`."""
    dbos_pool_size: int = Field(default=8, ge=1)
    """With `database_url`: DBOS's own connection pool (queue polling, workflow status writes)."""
    max_runs_per_host: int = Field(default=200, ge=1)
    """With `database_url`: how many session runs one host executes at once (a run waiting for an
    approval counts). Runs are DBOS workflows on a queue that every host takes from; give every host
    the same value, the queue keeps one (backend/cluster/dbos_runs.py)."""
    workspace: Path | None = None
    workspace_roots: list[Path] = Field(default_factory=list)
    """Folders under which a session may work, besides the default workspace and the agents'
    (backend/engine/workspaces.py). Never the data dir, a folder inside or holding it, or the
    config file's folder: a session there is refused whatever the root says."""
    max_iterations: int = Field(default=40, ge=1)
    tool_concurrency: int = Field(default=8, ge=1)
    max_agent_depth: int = Field(default=3, ge=0)
    """How deep sub-agents may nest: a top-level session is depth 0, its child 1, and so on."""
    memory_window: int = Field(default=100, ge=0)
    """Messages a session keeps in context; past that, older ones are consolidated into the
    workspace's memory/HISTORY.md and memory/MEMORY.md. 0 disables consolidation."""
    approval_timeout: float = Field(default=600, gt=0)
    model_retries: int = Field(default=3, ge=0)
    retry_backoff: float = Field(default=1.0, ge=0)
    model_request_timeout: float = Field(default=MODEL_REQUEST_TIMEOUT, gt=0)
    """Seconds from a model call to the first streamed chunk; past it the call is retried."""
    model_stream_silence_timeout: float = Field(default=MODEL_STREAM_SILENCE_TIMEOUT, gt=0)
    """Seconds a started stream may send nothing; past it the call is retried."""
    model_transport: Literal["auto", "litellm"] = "auto"
    """How models are reached: "auto" streams `openai/*` models (OpenAI and every OpenAI-compatible
    server) and `anthropic/*` models directly, for a fraction of LiteLLM's CPU per call
    (bench/model_paths.py), and every other provider through LiteLLM; "litellm" sends every call
    through LiteLLM."""
    thinking: ThinkingConfig = Field(default_factory=ThinkingConfig)
    read_only_auto_allow: bool = False
    allow_read_only_tools: bool = False
    """Calls of a third-party MCP server's tools annotated `readOnlyHint` (and not destructive) run
    without asking while the tool's definition is the one pinned (issue 34, item 4). Deny and ask
    rules, policies and the managed policy still decide first; a changed tool still asks."""
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    """How every command is confined (bubblewrap, else Landlock), what else it may read, its network."""
    protect_bootstrap: bool | list[str] = True
    """The workspace's instruction files (AGENTS.md, SOUL.md, USER.md, TOOLS.md, MEMORY.md,
    memory/MEMORY.md, HEARTBEAT.md) change only with a person's approval that says so, each time:
    `--approve all`, session allows and allow rules do not cover them. `false` lifts this; a list of
    workspace-relative paths protects exactly those (backend/rules/bootstrap_guard.py).
    The workspace's own `overseer.yaml`, `.mcp.json` and `.overseer/skills/` count as instruction
    files too; `false` lifts the question for them, never the trust check that keeps a changed
    workspace config or skill out until a person trusts it again."""
    sampling: Literal["ask", "deny"] = "ask"
    """Whether MCP servers may ask to run a session's model (`sampling/createMessage`): "ask" puts
    each request to the person as an approval, "deny" refuses them all. A mode may deny it too."""
    sampling_max_tokens: int = Field(default=4096, ge=1)
    """The most tokens a server's sampling request may have the model write."""
    builtin_servers: bool = True
    scheduler_enabled: bool = True
    """Fire cron jobs (`/api/schedules`) while the host runs."""
    cron_catch_up: bool = True
    """A cron job missed while the host was down runs once at start-up (else it waits for its next time)."""
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict, alias="mcpServers")
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    policies: dict[str, PolicyValue] = Field(default_factory=dict)
    deny_unmatched_ok: list[str] = Field(default_factory=list)
    """Deny rules (word for word) that may cover no tool here, e.g. kept for a server added later;
    any other deny rule naming a server or tool that does not exist stops the start
    (backend/rules/rule_references.py)."""
    hooks: HooksConfig = Field(default_factory=lambda: HooksConfig({}))
    """Claude Code's `hooks` block, as it is in `.claude/settings.json` (issue 34; docs/hooks.md):
    commands and URLs run before and after tool calls, at a prompt, at a session's start and stop."""
    telegram: TelegramConfig | None = None
    """The Telegram channel (issue 18); off unless configured."""
    notify: NotifyConfig = Field(default_factory=NotifyConfig)
    heartbeat: HeartbeatConfig = Field(default_factory=HeartbeatConfig)
    tool_selection: ToolSelectionConfig = Field(default_factory=ToolSelectionConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    checkpoints: CheckpointsConfig = Field(default_factory=CheckpointsConfig)
    """Checkpoints of the workspace before each step, their size limit and retention (issue 32)."""
    agents: list[dict[str, Any]] = Field(default_factory=list)
    """Named agents (issue 19), each with its own workspace, model, mode, servers and rules; none:
    one agent, `main`, as before. Validated by backend/agents.py, which knows the servers and modes."""
    routes: list[dict[str, Any]] = Field(default_factory=list)
    """Which agent a channel's message goes to, by channel, chat or user (backend/routing.py)."""

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    token: SecretStr | None = None
    """The single-user token; generated and kept in the data dir when unset."""
    users: list[dict[str, Any]] = Field(default_factory=list)
    """Optional users: {username, password_hash (argon2/bcrypt), role}; validated by the API's auth."""
    cors_origins: list[str] = Field(default_factory=list)
    """Origins allowed to call the API from a browser; none by default."""

    config_file: Path | None = Field(default=None, exclude=True)
    """Where the YAML came from; "always allow" rules are written back there."""

    @model_validator(mode="before")
    @classmethod
    def _old_model_timeout(cls, data: Any) -> Any:
        # `model_timeout` (before the two limits) still reads, as the request limit it mostly was.
        if isinstance(data, dict) and "model_timeout" in data:
            data = dict(data)
            data.setdefault("model_request_timeout", data.pop("model_timeout"))
        return data

    @model_validator(mode="after")
    def _channel_people_are_users(self) -> Settings:
        # A name that is no user would answer approvals as nobody: refused at the start, by name.
        names = {u.get("username") for u in self.users}
        mentioned = [t.user for t in self.notify.targets]
        if self.telegram:
            mentioned += [*self.telegram.users.values(), *self.telegram.notify]
        if self.users:
            unknown = [n for n in mentioned if n not in names]
            if unknown:
                raise ValueError(f"{unknown[0]!r} (in telegram or notify) is not one of `users`")
        if self.telegram:
            listed = set(self.telegram.users.values())
            for name in self.telegram.notify:
                if name not in listed:
                    raise ValueError(f"telegram.notify: {name!r} has no Telegram id in telegram.users")
        return self

    @model_validator(mode="after")
    def _host_id_is_known(self) -> Settings:
        # Filled in here, so every reader sees the one id; kept in the data dir at the host's start.
        self.host_id = check_host_id(self.host_id) if self.host_id else default_host_id(self.data_dir)
        return self

    @field_validator("mcp_servers")
    @classmethod
    def _no_server_takes_a_builtin_name(cls, servers: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        # Refused, not merged: a replacement would inherit the built-in's trust by name (issue 14, 11).
        for name, config in servers.items():
            try:
                check_not_builtin(name, config)
            except ValueError as exc:
                raise PydanticCustomError("builtin_server_name", str(exc)) from None
        return servers

    @field_validator("protect_bootstrap")
    @classmethod
    def _protected_files_are_in_the_workspace(cls, value: bool | list[str]) -> bool | list[str]:
        for name in [] if isinstance(value, bool) else value:
            if not name.strip() or name.startswith(("/", "~")) or ".." in name.replace("\\", "/").split("/"):
                raise ValueError(f"protect_bootstrap: {name!r} is not a path inside the workspace")
        return value

    @field_validator("users")
    @classmethod
    def _users_are_valid(cls, users: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # Checked here so a plain password or a bad role stops the start with a clear message.
        from backend.auth import UserConfig

        for user in users:
            UserConfig.model_validate(user)
        return users

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Explicit arguments beat the environment, which beats the file.
        return init_settings, env_settings, _YamlSource(settings_cls)

    @property
    def resolved_workspace(self) -> Path:
        return (self.workspace or Path.cwd()).expanduser().resolve()

    @property
    def all_workspace_roots(self) -> list[Path]:
        """`workspace_roots` and `permissions.additionalDirectories` (relative ones from the config file's folder)."""
        base = self.config_file.parent if self.config_file is not None else Path.cwd()
        extra = [base / Path(d).expanduser() for d in self.permissions.additionalDirectories]
        return [*self.workspace_roots, *extra]

    @property
    def checkpoints_dir(self) -> Path:
        """The folder of every workspace's shadow repository: `checkpoints.dir`, else `<data dir>/checkpoints`."""
        configured = self.checkpoints.dir
        return (configured or self.data_dir / "checkpoints").expanduser()

    @property
    def db_path(self) -> Path:
        return self.data_dir.expanduser() / "overseer.db"

    @property
    def writable_config_file(self) -> Path:
        return self.config_file or (self.data_dir.expanduser() / CONFIG_FILE_NAME)

    @property
    def trust_store(self) -> TrustStore:
        """The workspaces' config files and skill folders a person trusted (in the data dir)."""
        return TrustStore.in_data_dir(self.data_dir)


class _YamlSource(PydanticBaseSettingsSource):
    """Reads `overseer.yaml`; the path is found before validation, from env or defaults."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        # The data dir given as an argument (`--data-dir`) or in the environment holds the trust store.
        given = self.current_state.get("data_dir")
        found = find_config_file(Path(str(given)) if given else None)
        if found is None:
            return {}
        data = parse_yaml(found.text, source=str(found.path))
        data["config_file"] = found.path
        return data


OWN_WORKSPACE_NAME = "overseer-workspace"


def with_own_workspace(settings: Settings) -> Settings:
    """The settings `overseer serve` runs with: with no workspace configured, one of its own,
    `~/overseer-workspace` (created owner-only on first use), never the folder it was started in
    (`make run` in a checkout made the source tree the agents' workspace). Not under the data dir:
    a session never works there (backend/engine/workspaces.py)."""
    if settings.workspace is not None:
        return settings
    own = private_dir(Path.home() / OWN_WORKSPACE_NAME)
    return settings.model_copy(update={"workspace": own})


def load_settings(**overrides: Any) -> Settings:
    """Build Settings, turning validation errors into one readable ConfigError."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(top level)"
            lines.append(f"  {where}: {err['msg']}")
        raise ConfigError("invalid configuration:\n" + "\n".join(lines)) from exc

__all__ = [
    "CONFIG_FILE_NAME",
    "ConfigError",
    "FoundConfig",
    "Settings",
    "append_allow_rules",
    "default_data_dir",
    "expand_vars",
    "find_config_file",
    "load_settings",
    "with_own_workspace",
    "parse_yaml",
    "read_yaml",
    "update_config_file",
    "workspace_config",
]
