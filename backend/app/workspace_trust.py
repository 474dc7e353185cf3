"""Workspace trust for people: what a folder holds that counts only once trusted, and trusting
exactly what a person was shown (`overseer trust`, and GET/POST /api/workspace-trust).

The store and the hashing are backend/workspace_trust.py; the readers that check it are
backend/config.py (a folder's `overseer.yaml`, read from the current directory) and
backend/skills/catalog.py (a workspace's `.overseer/skills/`, read for every prompt). Modes are
not read from workspaces (only the built-ins and the data dir's), so they need no trust.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from backend.config import CONFIG_FILE_NAME, workspace_config
from backend.domain.errors import BadRequest, Conflict, DomainError, NotFound
from backend.paths import WORKSPACE_SKILLS_DIR
from backend.workspace_trust import Trustable, TrustEntry, TrustKind, TrustStore, folder

if TYPE_CHECKING:
    from backend.app.services import AppServices


class TrustItem(BaseModel):
    """Something a workspace holds as it is now, for a person to read before trusting it."""

    path: str
    kind: TrustKind
    sha256: str
    """Send it back to trust exactly this content (POST /api/workspace-trust)."""
    files: list[str]
    """A folder's files, relative to it; empty for a config file."""
    content: str | None
    """A config file's whole text; None for a folder."""
    changed: bool
    """True when a person trusted other content at this path before; False when it is new."""


TrustState = Literal["trusted", "changed", "gone"]
"""Unchanged since trusted; changed (left out until trusted again); no longer there."""


class TrustedEntry(BaseModel):
    """What a person trusted, and whether it still is what is there."""

    path: str
    kind: TrustKind
    sha256: str
    trusted_at: datetime
    state: TrustState


@dataclass(kw_only=True)
class WorkspaceTrust:
    """Finds what needs trust in folders, and records trust in the store of one data dir."""

    store: TrustStore
    data_dir: Path

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> WorkspaceTrust:
        """The trust of the host whose data dir this is."""
        data_dir = data_dir.expanduser()
        return cls(store=TrustStore.in_data_dir(data_dir), data_dir=data_dir)

    def items(self, where: Path) -> list[Trustable]:
        """What `where` holds that needs trust, as it is now: its `overseer.yaml` (unless it is the
        data dir's own, the admin's) and its `.overseer/skills/` (if it holds any file)."""
        found = [workspace_config(where, self.data_dir), folder(where / WORKSPACE_SKILLS_DIR)]
        return [item for item in found if item is not None]

    def untrusted(self, folders: Iterable[Path]) -> list[TrustItem]:
        """What the folders hold that is new or changed since a person trusted it, each once."""
        seen: set[Path] = set()
        shown: list[TrustItem] = []
        for where in folders:
            for item in self.items(where):
                if item.path not in seen and not self.store.is_trusted(item):
                    seen.add(item.path)
                    shown.append(self.shown(item))
        return shown

    def shown(self, item: Trustable) -> TrustItem:
        """`item` as a person reads it."""
        return TrustItem(
            path=str(item.path),
            kind=item.kind,
            sha256=item.sha256,
            files=list(item.files),
            content=item.content.decode("utf-8", errors="replace") if item.kind == "config" else None,
            changed=self.store.entry(item.path) is not None,
        )

    def trust(self, path: Path, sha256: str) -> TrustedEntry:
        """Trust what is at `path` only if its hash now is `sha256`, the one the person was shown.

        Conflict when it changed since (show it again); NotFound when nothing is there;
        BadRequest when `path` is neither a workspace's `overseer.yaml` nor its skills folder.
        """
        item = self._item_at(path)
        if item.sha256 != sha256:
            raise Conflict(
                f"{item.path} changed since it was shown (its sha256 is now {item.sha256}): "
                "read it again before trusting it"
            )
        return TrustedEntry(**self.store.trust(item).model_dump(), state="trusted")

    def revoke(self, path: Path) -> list[str]:
        """Forget what was trusted at `path`, or, for a folder, its config and skills; what was forgotten."""
        path = path.expanduser().resolve()
        candidates = [path, path / CONFIG_FILE_NAME, path / WORKSPACE_SKILLS_DIR]
        return [str(c) for c in candidates if self.store.revoke(c)]

    def entries(self) -> list[TrustedEntry]:
        """Everything trusted, each with whether it is still what is there."""
        return [TrustedEntry(**entry.model_dump(), state=self._state(entry)) for entry in self.store.entries()]

    def _state(self, entry: TrustEntry) -> TrustState:
        path = Path(entry.path)
        now = folder(path) if entry.kind == "folder" else workspace_config(path.parent, self.data_dir)
        if now is None:
            return "gone"
        return "trusted" if now.sha256 == entry.sha256 else "changed"

    def _item_at(self, path: Path) -> Trustable:
        if not path.is_absolute():
            raise BadRequest(f"path must be absolute, got {str(path)!r}")
        try:
            return self._found_at(path.resolve())
        except DomainError:
            raise  # a BadRequest is a ValueError too: it says what it means already
        except (OSError, ValueError, RuntimeError) as exc:
            # A name the OS will not look up (a NUL byte, a part over 255 bytes) names nothing to trust.
            raise BadRequest(f"{str(path)!r} cannot be looked up: {exc}") from None

    def _found_at(self, path: Path) -> Trustable:
        if path.name == CONFIG_FILE_NAME:
            if not path.is_file():
                raise NotFound(f"there is no file {path}")
            item = workspace_config(path.parent, self.data_dir)
            if item is None:
                raise BadRequest(f"{path} is the data dir's own config: it is the admin's, and needs no trust")
            return item
        if path.as_posix().endswith("/" + WORKSPACE_SKILLS_DIR):
            found = folder(path)
            if found is None:
                raise NotFound(f"{path} holds no file to trust")
            return found
        raise BadRequest(
            f"{path} is neither a workspace's {CONFIG_FILE_NAME} nor its {WORKSPACE_SKILLS_DIR} folder"
        )


def host_trust(host: AppServices) -> WorkspaceTrust:
    """The trust of a running host (its data dir's store)."""
    return WorkspaceTrust.in_data_dir(host.data_dir)


def host_folders(host: AppServices, extra: Path | None = None) -> list[Path]:
    """Where a host reads workspace configuration: the folder it started in (its `overseer.yaml`),
    its workspace and every agent's, and `extra` (a workspace a person names)."""
    folders = [Path.cwd(), host.settings.resolved_workspace, *(agent.workspace for agent in host.agents.list())]
    return [*folders, *([extra] if extra is not None else [])]
