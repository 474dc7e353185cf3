"""`overseer policy show`: the effective policy, each rule with the layer it comes from; and the
managed policy's refusal of `--approve all` for the commands that take it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from backend.config import ConfigError


def add_policy_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `policy` subcommand's arguments."""
    policy = sub.add_parser("policy", help="the effective permission policy and where each rule comes from")
    policy_sub = policy.add_subparsers(dest="policy_command", required=True)
    show = policy_sub.add_parser(
        "show", help="print every rule and per-tool policy in force, with its layer (managed, config, always-rules, ...)"
    )
    show.add_argument("--json", action="store_true", help="as JSON, for programs")


def run_policy(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run `overseer policy show` (ConfigError, for a managed file that cannot be used, is the caller's)."""
    from backend.app.managed_policy import load_managed_policy, managed_policy_path
    from backend.app.policy_layers import effective_policy
    from backend.config import load_settings

    out = out or sys.stdout
    overrides = {"data_dir": Path(args.data_dir)} if args.data_dir else {}
    settings = load_settings(**overrides)
    managed = load_managed_policy()
    found = effective_policy(settings, managed)
    if args.json:
        print(json.dumps(found.as_json(), indent=2), file=out)
        return 0
    print("Evaluated top to bottom: managed deny > managed ask > deny > ask > allow > per-tool policy > ask.", file=out)
    if found.managed_source is None:
        print(f"Managed policy: none ({managed_policy_path()} does not exist)", file=out)
    else:
        on = [name for name, value in found.switches.items() if value]
        print(f"Managed policy: {found.managed_source} (locked: no user or admin can change it)", file=out)
        print(f"  switches on: {', '.join(on) or 'none'}", file=out)
        if found.allowed_mcp_servers is not None:
            print(f"  allowed MCP servers: {'; '.join(found.allowed_mcp_servers) or 'none'}", file=out)
        if found.managed_hook_events:
            print(f"  hooks for: {', '.join(found.managed_hook_events)}", file=out)
    rules = [e for e in found.entries if e.kind == "rule"]
    policies = [e for e in found.entries if e.kind == "policy"]
    print("", file=out)
    print("Rules:", file=out)
    if not rules:
        print("  none", file=out)
    width = max((len(e.text) for e in rules), default=0)
    for entry in rules:
        lock = "  [locked]" if entry.locked else ""
        print(f"  {entry.layer:<13} {entry.effect:<6} {entry.text:<{width}}  {entry.where}{lock}", file=out)
    print("", file=out)
    print("Per-tool policies (for calls no rule decides; a mode's come first in its sessions):", file=out)
    width = max((len(e.text) for e in policies), default=0)
    for entry in policies:
        print(f"  {entry.layer:<13} {entry.effect:<12} {entry.text:<{width}}  {entry.where}", file=out)
    print("", file=out)
    print("A session's own 'allow for this session' rules are shown on its page (Runs without asking).", file=out)
    return 0


def refuse_approve_all(args: argparse.Namespace) -> None:
    """ConfigError when a command asks for `--approve all` and the managed policy turns it off."""
    if getattr(args, "approve", None) != "all":
        return
    from backend.app.managed_policy import load_managed_policy

    managed = load_managed_policy()
    if managed.disable_approve_all:
        raise ConfigError(f"--approve all is turned off: {managed.where('disable_approve_all')}")
