"""`overseer trust`: show what a folder holds that configures Overseer, and trust it as it is."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from backend.config_file import default_data_dir


def add_trust_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `trust` subcommand's arguments."""
    trust = sub.add_parser(
        "trust", help="trust a folder's overseer.yaml and .overseer/skills/ as they are now (shown first)"
    )
    trust.add_argument("path", nargs="?", default=".", help="the folder (default: the current directory)")
    trust.add_argument("--list", action="store_true", help="list what is trusted, and whether it changed since")
    trust.add_argument("--revoke", metavar="PATH", help="forget the trust of a folder's config and skills, or of one path")


def run_trust(args: argparse.Namespace) -> int:
    """Run `overseer trust` (list, revoke, or show and trust a folder's config and skills)."""
    from backend.app.workspace_trust import WorkspaceTrust

    trust = WorkspaceTrust.in_data_dir(Path(args.data_dir) if args.data_dir else default_data_dir())
    if args.list:
        entries = trust.entries()
        for entry in entries:
            print(f"{entry.state:8} {entry.kind:6} {entry.sha256}  {entry.path}  (trusted {entry.trusted_at:%Y-%m-%d %H:%M} UTC)")
        if not entries:
            print("Nothing is trusted.")
        return 0
    if args.revoke:
        forgotten = trust.revoke(Path(args.revoke))
        for path in forgotten:
            print(f"No longer trusted: {path}")
        if not forgotten:
            print(f"overseer trust: nothing is trusted at {args.revoke}", file=sys.stderr)
        return 0 if forgotten else 1
    where = Path(args.path).expanduser()
    if not where.is_dir():
        print(f"overseer trust: {where} is not a folder", file=sys.stderr)
        return 2
    items = trust.items(where.resolve())
    if not items:
        print(f"Nothing to trust in {where.resolve()}: no overseer.yaml and no .overseer/skills/.")
        return 0
    for item in items:
        # What is printed is what is hashed and recorded: the content read once.
        shown = trust.shown(item)
        print(f"── {item.path}  (sha256 {item.sha256})")
        if shown.content is not None:
            print(shown.content.rstrip("\n"))
        for name in shown.files:
            print(f"   {name}")
        trust.store.trust(item)
    print(
        f"Trusted as shown. Overseer run in {where.resolve()} now uses them; any change to them needs "
        "`overseer trust` again. Undo with `overseer trust --revoke PATH`."
    )
    return 0
