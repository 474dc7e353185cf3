"""`overseer rewind`: restore a session's workspace (or some of its files) to before one of its steps."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from backend.auth import local_principal

if TYPE_CHECKING:
    from backend.app.checkpoints import RewindResult
    from backend.config import Settings


def _step(text: str) -> int:
    try:
        step = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a step is a number from 1; {text!r} is not") from None
    if step < 1:
        raise argparse.ArgumentTypeError(
            f"steps are numbered from 1, as the dashboard shows them; {step} is not one"
        )
    return step


def add_rewind_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `rewind` subcommand's arguments."""
    rewind = sub.add_parser(
        "rewind",
        help="restore a session's workspace to before one of its steps (default: before its last)",
        description="Restore the workspace (or --files of it) as it was before STEP of SESSION. The "
        "rewind is itself checkpointed: rewinding to before the step it prints undoes it.",
    )
    rewind.add_argument("session", help="the session's id")
    rewind.add_argument("step", nargs="?", type=_step,
                        help="the step, numbered from 1 as the dashboard shows them (default: the last)")
    rewind.add_argument("--files", nargs="+", metavar="PATH",
                        help="restore only these files (paths in the workspace)")
    rewind.add_argument("--fork", action="store_true",
                        help="also start a new session whose conversation ends before the step")


async def run_rewind(args: argparse.Namespace, settings: Settings) -> int:
    """Run `overseer rewind` as the person at this machine; print what was restored."""
    from backend.app.host import Host
    from backend.domain.errors import BadRequest, DomainError

    host = Host(settings)  # the store and the checkpoints only: no servers, no runs are started
    await host.store.open()
    try:
        result = await host.app_services.checkpoints.rewind(
            args.session,
            step=args.step,
            files=args.files,
            fork=args.fork,
            by=local_principal(),
            via="terminal",
        )
    except DomainError as exc:
        print(f"overseer rewind: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, BadRequest) else 1
    finally:
        await host.store.close()
    _print(result, session_id=args.session)
    return 0


def _print(result: RewindResult, *, session_id: str) -> None:
    step = f"step {result.step}" + (f" ({result.tool_name})" if result.tool_name else "")
    workspace = result.workspace
    if result.restored:
        print(f"Restored {workspace} to before {step}:")
        for path in result.restored:
            print(f"  {path}")
    else:
        print(f"Nothing to restore: {workspace} is as it was before {step}.")
    if result.forked_session_id:
        print(f"Forked: session {result.forked_session_id} continues from before {step}.")
    print(f"To undo this rewind: overseer rewind {session_id} {result.checkpoint_step}")
