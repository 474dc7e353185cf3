"""`overseer`: run an agent, list servers, check rules."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from backend.config import ConfigError, Settings, load_settings, read_yaml, with_own_workspace
from backend.mcp_cli import run_mcp, run_mcp_config
from backend.rewind_cli import add_rewind_parser, run_rewind
from backend.trust_cli import add_trust_parser, run_trust
from backend.policy_cli import add_policy_parser, refuse_approve_all, run_policy

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")


# `rules check Read '{...}'` asks about the alias's primary tool.
CLI_ALIASES = {
    "Bash": "mcp__shell__exec",
    "Read": "mcp__file__read_file",
    "Edit": "mcp__file__edit_file",
    "Write": "mcp__file__write_file",
    "WebFetch": "mcp__browser__navigate",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="overseer", description="An MCP-native agent host with approvals.")
    parser.add_argument("--data-dir", help="where state lives (default ~/.overseer; env OVERSEER_DATA_DIR)")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="-v: Overseer's info lines; -vv: also the libraries' (LiteLLM, httpx, MCP)")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the web dashboard and API (with the engine in-process)")
    serve.add_argument("--host", help="address to bind (default 127.0.0.1; env OVERSEER_HOST)")
    serve.add_argument("--port", type=int, help="port (default 8000; env OVERSEER_PORT)")
    serve.add_argument("--expose-tools", action="store_true",
                       help="the MCP endpoint /mcp also re-exports the host's tools, through the gate")

    mcp = sub.add_parser("mcp", help="serve Overseer to an MCP client (Claude Desktop, Claude Code) on stdio")
    mcp.add_argument("--host-url", help="bridge to a running `overseer serve` at this URL (token: "
                                        "OVERSEER_TOKEN or the data dir); default: an embedded host")
    mcp.add_argument("--expose-tools", action="store_true",
                     help="also re-export the host's tools (mcp__server__tool), through the approval gate "
                          "(embedded host only; a running host decides with `serve --expose-tools`)")
    mcp.add_argument("--workspace", help="folder the agents work in (embedded host only; required unless "
                                         "OVERSEER_WORKSPACE or `workspace:` in overseer.yaml names one)")
    mcp_sub = mcp.add_subparsers(dest="mcp_command")
    mcp_login = mcp_sub.add_parser("login", help="sign in to a remote MCP server that asks for OAuth")
    mcp_login.add_argument("name", help="the server's name in mcpServers")
    mcp_cimd = mcp_sub.add_parser("client-metadata", help="print the client metadata document to publish at "
                                                         "`oauth.client_metadata_url` (Client ID Metadata Documents)")
    mcp_cimd.add_argument("url", nargs="?", help="where it is published (default: the one the config names)")
    mcp_cimd.add_argument("--dashboard-url", action="append", help="a URL people open the dashboard at "
                                                                   "(repeatable; default http://127.0.0.1:<port>)")
    mcp_cimd.add_argument("--callback-port", type=int, action="append", help="a loopback port `mcp login` "
                                                                             "waits on (repeatable; default: the config's)")

    mcp_config = sub.add_parser("mcp-config", help="print the JSON that adds Overseer to an MCP client")
    mcp_config.add_argument("client", choices=["claude-desktop", "claude-code"])
    mcp_config.add_argument("--host-url", help="use a running `overseer serve` instead of an embedded host")
    mcp_config.add_argument("--expose-tools", action="store_true", help="also re-export the host's tools")
    mcp_config.add_argument("--workspace", help="folder the agents work in, written into the snippet "
                                                "(default: the configured workspace, else the current directory)")

    hash_pw = sub.add_parser("hash-password", help="print the argon2 hash of a password for `users:`")
    hash_pw.add_argument("password", nargs="?", help="read from the terminal when omitted")

    api_key = sub.add_parser("api-key", help="API keys for programs calling /api/agents/invoke")
    api_key_sub = api_key.add_subparsers(dest="api_key_command", required=True)
    create_key = api_key_sub.add_parser("create", help="create a key and print it once")
    create_key.add_argument("name")
    create_key.add_argument("--role", choices=["viewer", "approver", "admin"], default="approver")
    api_key_sub.add_parser("list", help="list keys (never the keys themselves)")
    revoke_key = api_key_sub.add_parser("revoke", help="revoke a key by name")
    revoke_key.add_argument("name")

    run = sub.add_parser("run", help="run an agent on a task, in this terminal")
    run.add_argument("prompt", nargs="?", help="the task; asked for interactively when omitted")
    run.add_argument("--model", help="LiteLLM model, e.g. anthropic/claude-sonnet-4-5 (default: the offline demo)")
    run.add_argument("--api-base")
    run.add_argument("--workspace", help="folder the agent works in (default: the configured workspace, else the current directory)")
    run.add_argument("--approve", choices=["ask", "all", "none"], default="ask",
                     help="ask in the terminal, allow every ask (never a deny), or deny every ask")
    run.add_argument("--json", action="store_true", help="print one JSON event per line")
    run.add_argument("--max-iterations", type=int)
    run.add_argument("--mode", help="agent, ask, plan, research, review or one of yours (default: the agent's, else agent)")
    run.add_argument("--agent", help="the named agent (agents: in overseer.yaml) whose workspace, model and rules it uses")
    run.add_argument("--engine", choices=["litellm", "claude-sdk"],
                     help="litellm (our loop) or claude-sdk (Claude Code's); default: default_engine in config")
    run.add_argument("--instructions", default="", help="the session's own instructions (last in its prompt)")
    run.add_argument("--skill", action="append", default=[], help="attach a skill (repeatable); or start the task with /name")
    run.add_argument("--context", action="append", default=[], help="attach a file or folder of the workspace (repeatable)")

    resume = sub.add_parser("resume", help="continue a session a previous process left running or waiting")
    resume.add_argument("session_id", nargs="?", help="default: the most recent one")
    resume.add_argument("--approve", choices=["ask", "all", "none"], default="ask")
    resume.add_argument("--json", action="store_true")

    servers = sub.add_parser("servers", help="list the MCP servers, their status and tools")
    servers.add_argument("--json", action="store_true")
    servers.add_argument("--timeout", type=float, default=30)

    workflow = sub.add_parser("workflow", help="mode-based workflows: steps with approvals between them")
    workflow_sub = workflow.add_subparsers(dest="workflow_command", required=True)
    workflow_run = workflow_sub.add_parser("run", help="run a workflow in this terminal, asking at each gate")
    workflow_run.add_argument("name", help="e.g. plan-then-build (see `overseer workflow list`)")
    workflow_run.add_argument("--input", required=True, help="the task; the steps' {{input}}")
    workflow_run.add_argument("--model", help="LiteLLM model (default: the offline demo)")
    workflow_run.add_argument("--api-base")
    workflow_run.add_argument("--workspace", help="folder every step works in (default: current directory)")
    workflow_run.add_argument("--approve", choices=["ask", "all", "none"], default="ask",
                              help="ask in the terminal, allow every ask and gate, or deny them")
    workflow_list = workflow_sub.add_parser("list", help="list the workflows (built-in and your own)")
    workflow_list.add_argument("--json", action="store_true")

    add_trust_parser(sub)
    add_rewind_parser(sub)
    add_policy_parser(sub)

    rules = sub.add_parser("rules", help="permission rules")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True)
    check = rules_sub.add_parser("check", help="print the decision for one tool call and what decided it")
    check.add_argument("tool", help="full tool name (mcp__shell__exec) or an alias (Bash, Read, Edit)")
    check.add_argument("arguments", help='the arguments as JSON, e.g. \'{"command": "ls"}\'')
    check.add_argument("--config", help="an overseer.yaml or .claude/settings.json to take rules from")
    check.add_argument("--workspace", help="the folder ./ paths mean (default: OVERSEER_WORKSPACE, "
                                           "`workspace:` in overseer.yaml, else the current directory)")
    return parser


def _settings(args: argparse.Namespace, **overrides: Any) -> Settings:
    if args.data_dir:
        overrides["data_dir"] = Path(args.data_dir)
    return load_settings(**{k: v for k, v in overrides.items() if v is not None})


def _warn_if_unconfined(summary: str, confined: bool) -> None:
    """In red on stderr: shell commands run outside the kernel sandbox (`sandbox: off`, or none works)."""
    if not confined:
        red, plain = ("\x1b[1;31m", "\x1b[0m") if sys.stderr.isatty() else ("", "")
        print(f"{red}WARNING: {summary}{plain}", file=sys.stderr)


async def _run(args: argparse.Namespace) -> int:
    from backend.api.local import host_with_local_api
    from backend.app.chat import ChatInput
    from backend.domain.session_options import SessionOptions
    from backend.terminal import DEMO_TASK, TerminalUI

    # Scheduled jobs belong to `overseer serve`, where someone can see and answer their approvals.
    settings = _settings(
        args,
        model=args.model,
        api_base=args.api_base,
        workspace=args.workspace,
        max_iterations=args.max_iterations,
        scheduler_enabled=False,
    )
    prompt = args.prompt
    if not prompt:
        if sys.stdin.isatty():
            prompt = input(f"What should the agent do? [{DEMO_TASK}]\n> ").strip()
        prompt = prompt or DEMO_TASK
    async with host_with_local_api(settings) as host:
        _warn_if_unconfined(host.sandbox.status.summary(), host.sandbox.status.confined)
        if host.is_demo and not args.json:
            print(
                "┌ Demo mode: no model is configured, so a scripted offline model plays the agent.\n"
                "└ Set OVERSEER_MODEL (and OVERSEER_API_KEY / OVERSEER_API_BASE) to use a real one.\n"
            )
        ui = TerminalUI(host, approve=args.approve, as_json=args.json)
        chat = ChatInput(text=prompt, attached_skills=args.skill, context_paths=args.context)
        try:
            return await ui.run_chat(
                chat,
                SessionOptions(
                    mode=args.mode,
                    instructions=args.instructions,
                    engine=args.engine,
                    agent=args.agent,
                    model=args.model,
                ),
            )
        except (LookupError, ValueError) as exc:
            print(f"overseer run: {exc.args[0] if exc.args else exc}", file=sys.stderr)
            return 2


async def _workflow(args: argparse.Namespace) -> int:
    from backend.api.local import host_with_local_api
    from backend.app.host import Host
    from backend.workflow_cli import WorkflowTerminal, print_definitions
    from backend.workflows.files import UnknownWorkflow, WorkflowError

    try:
        if args.workflow_command == "list":
            return print_definitions(Host(_settings(args)), as_json=args.json, out=sys.stdout)
        # Scheduled jobs belong to `overseer serve`, as for `overseer run`.
        settings = _settings(
            args, model=args.model, api_base=args.api_base, workspace=args.workspace, scheduler_enabled=False
        )
        async with host_with_local_api(settings) as host:
            return await WorkflowTerminal(host, approve=args.approve).run(args.name, args.input)
    except (UnknownWorkflow, WorkflowError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


async def _resume(args: argparse.Namespace) -> int:
    from backend.api.local import host_with_local_api
    from backend.terminal import TerminalUI

    async with host_with_local_api(_settings(args), recover=False) as host:
        return await TerminalUI(host, approve=args.approve, as_json=args.json).resume(args.session_id)


async def _servers(args: argparse.Namespace) -> int:
    from backend.app.server_configs import server_configs
    from backend.mcp.pool import McpPool

    settings = _settings(args)
    async with McpPool(server_configs(settings), log_dir=settings.data_dir.expanduser() / "logs") as pool:
        # A server still starting at the bound is shown as "starting" and counts as not working.
        with contextlib.suppress(TimeoutError):
            await pool.wait_ready(timeout=args.timeout)
        statuses = pool.statuses()
    # Only enabled servers are listed (server_configs leaves the disabled out): each must work.
    failing = [s for s in statuses if s.state != "ready"]
    if args.json:
        print(json.dumps([_status_json(s) for s in statuses], indent=2))
        # stdout is for programs; a person running this still sees what failed, and why.
        for status in failing:
            print(f"overseer servers: {status.error or f'MCP server {status.name!r} is {status.state}'}",
                  file=sys.stderr)
    else:
        for status in statuses:
            where = f" {status.url}" if status.url else ""
            print(f"{status.name}{where}: {status.state}" + (f" ({status.error})" if status.error else ""))
            if status.last_http_error and status.state != "ready":
                print(f"  last HTTP error: {status.last_http_error}")
            for tool in status.tools:
                hints = [k for k, v in tool.annotations.model_dump().items() if v is True]
                print(f"  {tool.name}" + (f"  [{', '.join(hints)}]" if hints else ""))
    return 1 if failing else 0


def _status_json(status: Any) -> dict[str, Any]:
    return {
        "name": status.name,
        "state": status.state,
        "error": status.error,
        "restarts": status.restarts,
        "last_restart": status.last_restart,
        "url": status.url,
        "last_http_error": status.last_http_error,
        "needs_sign_in": status.needs_sign_in,
        "tools": [t.model_dump() for t in status.tools],
    }


def _serve(args: argparse.Namespace) -> int:
    from backend.api.app import create_app
    from backend.api.ready import ReadyServer, print_ready, ready_line
    from backend.api.server_limits import server_config
    from backend.auth import AuthError, UserConfig, check_bind

    settings = with_own_workspace(_settings(args, host=args.host, port=args.port))
    try:
        check_bind(
            settings.host,
            token_configured=bool(settings.token and settings.token.get_secret_value().strip()),
            users=[UserConfig.model_validate(u) for u in settings.users],
        )
    except AuthError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # Servers that call the host back reach it on loopback when it listens on every interface.
    local_host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    shown_local = f"[{local_host}]" if ":" in local_host else local_host
    app = create_app(
        settings, url=f"http://{shown_local}:{settings.port}", expose_tools=args.expose_tools or settings.expose_tools
    )
    shown_host = f"[{settings.host}]" if ":" in settings.host else settings.host
    print(f"Overseer is starting on http://{shown_host}:{settings.port}/ as host {settings.host_id}")
    if settings.model is None:
        print("No model is configured: sessions use the offline demo model. Set OVERSEER_MODEL to use a real one.")
    print(f"The agents' default workspace is {settings.resolved_workspace} (set `workspace:` in overseer.yaml to change it)")
    sandbox = app.state.host.sandbox.status
    _warn_if_unconfined(sandbox.summary(), sandbox.confined)
    # Info level for uvicorn's start-up lines ("running on ..." says the socket is listening);
    # access lines stay off; timeouts and connection limits in backend/api/server_limits.py.
    auth = app.state.auth
    url = f"http://{shown_local}:{settings.port}/"  # where this machine's browser reaches it, even bound to 0.0.0.0
    line = ready_line(url=url, token_link=None if auth.multi_user else f"{url}login?token={auth.token}")
    ReadyServer(server_config(app, host=settings.host, port=settings.port), on_ready=print_ready(line)).run()
    return 0


def _hash_password(args: argparse.Namespace) -> int:
    import getpass

    from backend.auth import hash_password

    password = args.password or getpass.getpass("password: ")
    print(hash_password(password))
    return 0


def _api_key(args: argparse.Namespace) -> int:
    from backend.api.app import build_authenticator

    auth = build_authenticator(_settings(args))
    try:
        if args.api_key_command == "create":
            print(auth.create_api_key(args.name, role=args.role))
        elif args.api_key_command == "list":
            print(json.dumps(auth.list_api_keys(), indent=2, default=str))
        elif not auth.revoke_api_key(args.name):
            print(f"error: no API key named {args.name!r}", file=sys.stderr)
            return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _rules_check(args: argparse.Namespace) -> int:
    from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine, ToolCallView
    from backend.rules.grammar import RuleSet
    from backend.rules.own_data import OwnDataGuard
    from backend.rules.permission_modes import mode_rules
    from backend.app.managed_policy import load_managed_policy
    from backend.app.server_configs import skill_read_roots
    from backend.approvals.hook_tools import hook_names
    from backend.domain.hook_config import HooksConfig

    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        print(f"error: the arguments are not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(arguments, dict):
        print("error: the arguments must be a JSON object", file=sys.stderr)
        return 2
    # Every command honours OVERSEER_WORKSPACE / `workspace:`; `./.env` means that folder's .env.
    workspace = _settings(args, workspace=args.workspace).resolved_workspace
    settings = _settings(args)
    # What the host puts above every rule: the managed policy, and Overseer's own folders.
    managed = load_managed_policy()
    own_data = OwnDataGuard.of(
        data_dir=settings.data_dir, checkpoints_dir=settings.checkpoints_dir, read_roots=skill_read_roots(settings)
    )
    if args.config:
        path = Path(args.config)
        data = json.loads(path.read_text()) if path.suffix == ".json" else read_yaml(path)
        pasted = data.get("permissions") or {}
        rules = RuleSet.from_config(pasted, source=str(path))
        default_mode = pasted.get("defaultMode") if isinstance(pasted, dict) else None
        rules += mode_rules(default_mode, managed)  # as the host maps it
        policies = {**DEFAULT_POLICIES, **(data.get("policies") or {})}
        hooks = HooksConfig.model_validate(data.get("hooks") or {})
    else:
        rules = RuleSet.from_config(settings.permissions.model_dump(), source="user")
        rules += mode_rules(settings.permissions.defaultMode, managed)
        policies = {**DEFAULT_POLICIES, **settings.policies}
        hooks = settings.hooks
    engine = PolicyEngine(rules, policies, managed=managed.rules(), own_data=own_data)
    tool = CLI_ALIASES.get(args.tool, args.tool)
    verdict = engine.evaluate(
        ToolCallView(name=tool, arguments=arguments, workspace=workspace)
    )
    print(f"{verdict.verdict}\t{verdict.reason}")
    for event in ("PreToolUse", "PermissionRequest", "PostToolUse"):  # they run too, and may change it (docs/hooks.md)
        for handler in hooks.handlers(event, *hook_names(tool)):
            print(f"hook\t{event}: {handler.principal}")
    return 0


# Libraries that log a line per request at INFO (LiteLLM's "completion() model= ..." floods stderr
# under load); they stay at WARNING unless asked for with -vv.
THIRD_PARTY_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx", "httpcore", "mcp", "openai", "anthropic")


def _configure_logging(verbosity: int) -> None:
    logging.basicConfig(level=logging.INFO if verbosity else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO if verbosity >= 2 else logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _configure_logging(args.verbose)
    try:
        refuse_approve_all(args)  # the managed policy may turn `--approve all` off
        if args.command == "policy":
            return run_policy(args)
        if args.command == "run":
            return asyncio.run(_run(args))
        if args.command == "serve":
            return _serve(args)
        if args.command == "hash-password":
            return _hash_password(args)
        if args.command == "mcp":
            return asyncio.run(run_mcp(args, _settings))
        if args.command == "mcp-config":
            return run_mcp_config(args, _settings)
        if args.command == "api-key":
            return _api_key(args)
        if args.command == "resume":
            return asyncio.run(_resume(args))
        if args.command == "servers":
            return asyncio.run(_servers(args))
        if args.command == "workflow":
            return asyncio.run(_workflow(args))
        if args.command == "rules":
            return _rules_check(args)
        if args.command == "trust":
            return run_trust(args)
        if args.command == "rewind":
            return asyncio.run(run_rewind(args, _settings(args)))
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 2


if __name__ == "__main__":
    sys.exit(main())
