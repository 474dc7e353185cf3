"""Persistence behind one interface (`Store`); SQLite is the embedded default."""

from backend.store.base import NotFound, Store
from backend.store.sqlite import SqliteStore

__all__ = ["NotFound", "SqliteStore", "Store"]
