"""What a leading `~` in a path means: one function, used by the file server and by the host's rules.

If the two read `~` differently, a deny rule judges one path while the server opens another
(`~root/ws/secrets/key` was a relative name to the rules and the secret to the server). So the
meaning lives here only, and the host's rules import it.
"""

from __future__ import annotations

from pathlib import Path


class TildeError(ValueError):
    """A `~user` path: another user's home, which neither the tools nor the rules accept."""


def expand_home(path: str) -> str:
    """`~` and `~/p` under this user's home folder; a path not starting with `~` as it is.

    `~user/p` raises TildeError: a model has no business in another user's home, and a rule
    cannot be sure which folder the name would reach.
    """
    if not path.startswith("~"):
        return path
    if path == "~" or path.startswith("~/"):
        return str(Path.home()) + path[1:]
    raise TildeError(
        f"path '{path}' names another user's home folder ('~user' is not supported); "
        "use a path relative to the workspace, or ~/ for your own home"
    )
