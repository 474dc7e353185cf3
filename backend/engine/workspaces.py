"""Where a session may work (issue 31): under a root an admin configured, never near the host's secrets.

A session's workspace is what its file and shell tools may read and write, and what its context
paths are read from. So whoever names one chooses what the agent (and the person's first
message) can reach: the data dir holds the admin token, the JWT secret, the API keys and the
answer-link key, and the host's config file may hold more. A workspace therefore:

- lies under an allowed root: a folder of `workspace_roots` (overseer.yaml), an agent's
  workspace, or the default workspace (symlinks resolved first, so a link leads nowhere new);
- is not the data dir, not inside it (an agent's own workspace under `<data dir>/agents/` is
  the one exception: the host made it there), and does not hold it;
- is not the folder of the host's config file, nor a folder holding it, unless that folder is
  itself a configured workspace (a project's own trusted `overseer.yaml`, already guarded by
  workspace trust).

An admin may name any folder that passes; anyone else chooses one of the allowed workspaces
as listed (`WorkspaceRoots.choices`), they do not type paths.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from backend.domain.errors import Forbidden


class WorkspaceRefused(Forbidden):
    """A workspace outside the allowed roots, or one that reaches the host's own secrets."""


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(Path(path).expanduser()))


@dataclass(kw_only=True)
class WorkspaceRoots:
    """The allowed roots and the fenced folders; `configured()` gives the agents' and the default
    workspace as they are now (agents may be edited while the host runs)."""

    roots: Sequence[Path]
    """`workspace_roots` from the config."""
    configured: Callable[[], Sequence[Path]]
    """The default workspace and every agent's, as they are now."""
    data_dir: Path
    config_file: Path | None = None

    def choices(self) -> list[Path]:
        """The allowed workspaces a person picks from (resolved, each one usable), in order."""
        found: list[Path] = []
        for folder in [*self.configured(), *self.roots]:
            real = _real(folder)
            if real not in found and real.is_dir() and self._fenced(real) is None:
                found.append(real)
        return found

    def check(self, workspace: Path | str, *, chooser: bool = False) -> Path:
        """`workspace` resolved, if a session may work there (WorkspaceRefused, saying why, else).

        `chooser`: the caller is no admin and may only pick one of `choices()` exactly.
        """
        real = _real(workspace)
        shown = str(workspace) if str(workspace) == str(real) else f"{workspace} (which is {real})"
        fenced = self._fenced(real)
        if fenced is not None:
            raise WorkspaceRefused(f"workspace {shown} {fenced}; a session may never work there")
        if chooser:
            if real not in self.choices():
                listed = ", ".join(str(c) for c in self.choices()) or "none"
                raise WorkspaceRefused(
                    f"workspace {shown} is not one of the allowed workspaces ({listed}); only an admin "
                    "may name another folder (GET /api/workspaces lists them)"
                )
            return real
        roots = [_real(r) for r in [*self.configured(), *self.roots]]
        if not any(real.is_relative_to(root) for root in roots):
            listed = ", ".join(str(r) for r in dict.fromkeys(roots))
            raise WorkspaceRefused(
                f"workspace {shown} is under none of the allowed roots ({listed}); an admin adds a "
                "root to workspace_roots in overseer.yaml"
            )
        return real

    def _fenced(self, real: Path) -> str | None:
        """Why `real` reaches the host's secrets, or None."""
        data_dir = _real(self.data_dir)
        if real == data_dir:
            return "is the data dir"
        if data_dir.is_relative_to(real):
            return f"holds the data dir {data_dir}"
        configured = [_real(c) for c in self.configured()]
        if real.is_relative_to(data_dir) and not any(
            real.is_relative_to(c) and c.is_relative_to(data_dir) and c != data_dir for c in configured
        ):
            return f"is inside the data dir {data_dir}"
        if self.config_file is not None:
            config_dir = _real(self.config_file).parent
            if config_dir.is_relative_to(real) and real not in configured:
                what = "is the folder of" if real == config_dir else "holds"
                return f"{what} the host's config file {_real(self.config_file)}"
        return None
