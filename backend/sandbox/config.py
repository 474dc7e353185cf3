"""`sandbox:` in overseer.yaml: which backend confines commands, what else they may read, their network."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.sandbox.hosts import HostAllowlist


class NetworkConfig(BaseModel):
    """Where commands may connect, through the host's egress proxy; every other host asks a person."""

    model_config = ConfigDict(extra="forbid")
    allow: list[str] = Field(default_factory=list)
    """Host names (`registry.npmjs.org`, `*.github.com`, `host:port`) reached without asking."""
    enabled: bool = False
    """Whether commands get the proxy at all. Off (the default): no network, nothing to ask.
    Listing hosts in `allow` turns it on."""

    @field_validator("allow")
    @classmethod
    def _patterns_are_valid(cls, patterns: list[str]) -> list[str]:
        HostAllowlist(patterns)  # a bad pattern stops the start with its own message
        return patterns

    @property
    def on(self) -> bool:
        return self.enabled or bool(self.allow)


class AgentSandbox(BaseModel):
    """A named agent's own `sandbox:`: more hosts for its commands, its own `auto_allow`."""

    model_config = ConfigDict(extra="forbid")
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    """Added to the host's allowlist for this agent's sessions (and turns the proxy on for them)."""
    auto_allow: bool | None = None
    """None: the host's `sandbox.auto_allow`."""


class SandboxConfig(BaseModel):
    """The command sandbox (docs/sandbox.md)."""

    model_config = ConfigDict(extra="forbid")
    backend: Literal["auto", "bwrap", "landlock", "off"] = "auto"
    """`auto`: bubblewrap, else Landlock. `off` (admins only, in the config): commands run
    unconfined, and every surface says so in red."""
    read_only: list[Path] = Field(default_factory=list)
    """More folders commands may read (toolchains outside /usr, say); never written."""
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    auto_allow: bool = False
    """A command that runs confined runs without asking, unless an ask or deny rule matches it."""
    allow_unconfined: bool = True
    """Whether the model may ask to run one command outside the sandbox (`exec` with
    `outside_sandbox: true`), a question of its own, answered once at a time. False: refused."""

    @model_validator(mode="before")
    @classmethod
    def _off(cls, data: Any) -> Any:
        # `sandbox: off` (which YAML reads as false) and `sandbox: false` both mean the backend.
        if data is False or data == "off":
            return {"backend": "off"}
        return data
