"""Which MCP servers a host runs: the built-ins, rooted at the default workspace, and the person's
own that the managed policy admits."""

from __future__ import annotations

import sys
from pathlib import Path

from backend.app.managed_policy import allowed_servers, load_managed_policy
from backend.config import Settings
from backend.mcp.config import HostApi, McpServerConfig, builtin_servers
from backend.paths import BUILTIN_SKILLS_DIR
from backend.rules.managed import ManagedPolicy
from backend.sandbox.launcher import detect


def skill_read_roots(settings: Settings) -> list[Path]:
    """Folders every workspace may read but not write: the skill folders."""
    return [settings.data_dir.expanduser() / "skills", BUILTIN_SKILLS_DIR]


def server_configs(
    settings: Settings, host_api: HostApi | None = None, managed: ManagedPolicy | None = None
) -> dict[str, McpServerConfig]:
    """Built-in servers (rooted at the default workspace) plus the person's own.

    Settings refuse a server of theirs under a built-in's name, so an entry of that name can
    only switch the built-in off, never replace it. The managed policy's `allowed_mcp_servers`
    leaves out the person's servers it does not admit (`managed`: read from its file if not given).
    """
    servers: dict[str, McpServerConfig] = {}
    if settings.builtin_servers:
        servers.update(
            builtin_servers(
                python=sys.executable,
                root=settings.resolved_workspace,
                host_api=host_api,
                read_roots=skill_read_roots(settings),
            )
        )
        if "file" in servers:  # Overseer's own folders: the file server refuses them, even in a workspace
            file = servers["file"]
            own = ["--data-dir", str(settings.data_dir.expanduser().absolute())]
            own += ["--checkpoints-dir", str(settings.checkpoints_dir.absolute())]
            args = [*file.args[:4], *own, *file.args[4:]]  # right after `--root DIR`
            servers["file"] = file.model_copy(update={"args": args})
        if not detect(settings.sandbox.backend).confined and settings.sandbox.backend != "off":
            # Nothing confines commands here and no admin said `sandbox: off`: no shell at all.
            servers.pop("shell", None)
    servers.update(allowed_servers(load_managed_policy() if managed is None else managed, settings.mcp_servers))
    return {name: cfg for name, cfg in servers.items() if not cfg.disabled}
