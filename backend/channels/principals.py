"""Who a channel acts as: a name from `users:` (or, single-user, the owner) as a Principal."""

from __future__ import annotations

from backend.auth import Principal, UserConfig
from backend.config import Settings


def principal_named(settings: Settings, name: str) -> Principal:
    """The principal `name` stands for: a `users:` entry with its role, else (single-user) an admin.

    Without `users:` there is one person, the owner, who configured the bot and the push targets:
    whoever they map is them. Settings already refused names that are not users.
    """
    for raw in settings.users:
        user = UserConfig.model_validate(raw)
        if user.username == name:
            return Principal(name=user.username, role=user.role, kind="user")
    if settings.users:
        raise LookupError(f"{name!r} is not one of `users`")
    return Principal(name=name, role="admin", kind="user")
