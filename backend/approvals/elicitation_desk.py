"""A server's question to the person (`elicitation/create`), asked as an approval of its own kind.

The question waits in the ApprovalBroker like any approval (persisted, shown on the dashboard,
bounded by the approval timeout), in the session whose tool call the server is running. The
answer maps onto the spec's three actions:

    allow_once + content   -> accept, with the content (checked against the requested schema)
    deny                   -> decline
    cancel, or no answer   -> cancel (a timeout, the session stopping, the call ending)

The requested schema is the spec's (2025-11-25): a flat object whose properties are strings
(optionally with a `format`, an `enum`, or a titled `oneOf` of const/title), numbers, integers,
booleans, or multi-selects (`type: array` whose `items` hold an `enum` or an `anyOf` of
const/title, with `minItems`/`maxItems`). A field left out takes the schema's `default`, whatever
door the answer came through (the dashboard, REST, the terminal's `--approve all`, a channel).
"""

from __future__ import annotations

import re
import uuid
from datetime import date, datetime
from typing import Any

import mcp_types

from backend.domain.errors import Invalid
from backend.domain.models import Approval
from backend.mcp.elicitation import Elicitation
from backend.approvals.broker import ApprovalBroker
from backend.approvals.asking import WaitingSink, ask_and_wait

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class ElicitationContentInvalid(Invalid):
    """Accepted content that does not fit the schema the server asked with; names the field."""


def checked_content(schema: dict[str, Any], content: dict[str, Any] | None) -> dict[str, Any]:
    """`content` as the server asked for it, or ElicitationContentInvalid naming the first bad field.

    A field not given (or given as null) takes the schema's default when it has a valid one, so
    an answer of `{}` means "the form as the server filled it in". Integers given as whole floats
    (a form's number input) become ints; nothing else is coerced.
    """
    properties: dict[str, Any] = schema.get("properties") or {}
    given = content or {}
    unknown = sorted(set(given) - set(properties))
    if unknown:
        raise ElicitationContentInvalid(f"field {unknown[0]!r} is not in the form")
    filled = defaults_of(schema) | {name: value for name, value in given.items() if value is not None}
    missing = [name for name in schema.get("required") or [] if filled.get(name) is None]
    if missing:
        raise ElicitationContentInvalid(f"field {missing[0]!r} is required")
    return {name: _checked_value(name, properties[name] or {}, value) for name, value in filled.items()}


def defaults_of(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema's defaults that fit their own field (a server's bad default is left out, not sent back)."""
    defaults: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        if isinstance(spec, dict) and spec.get("default") is not None:
            try:
                defaults[name] = _checked_value(name, spec, spec["default"])
            except ElicitationContentInvalid:
                continue
    return defaults


def _checked_value(name: str, spec: dict[str, Any], value: Any) -> Any:
    kind = spec.get("type")
    if kind == "boolean":
        if not isinstance(value, bool):
            raise ElicitationContentInvalid(f"field {name!r} must be true or false")
        return value
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ElicitationContentInvalid(f"field {name!r} must be a number")
        if kind == "integer":
            if isinstance(value, float) and not value.is_integer():
                raise ElicitationContentInvalid(f"field {name!r} must be a whole number")
            value = int(value)
        if "minimum" in spec and value < spec["minimum"]:
            raise ElicitationContentInvalid(f"field {name!r} must be at least {spec['minimum']}")
        if "maximum" in spec and value > spec["maximum"]:
            raise ElicitationContentInvalid(f"field {name!r} must be at most {spec['maximum']}")
        return value
    if kind == "string":
        if not isinstance(value, str):
            raise ElicitationContentInvalid(f"field {name!r} must be text")
        choices = spec.get("enum") or [option.get("const") for option in spec.get("oneOf") or []]
        if choices and value not in choices:
            raise ElicitationContentInvalid(f"field {name!r} must be one of {', '.join(map(str, choices))}")
        if "minLength" in spec and len(value) < spec["minLength"]:
            raise ElicitationContentInvalid(f"field {name!r} must be at least {spec['minLength']} characters")
        if "maxLength" in spec and len(value) > spec["maxLength"]:
            raise ElicitationContentInvalid(f"field {name!r} must be at most {spec['maxLength']} characters")
        if not _fits_format(spec.get("format"), value):
            raise ElicitationContentInvalid(f"field {name!r} must be a valid {spec['format']}")
        return value
    if kind == "array":
        return _checked_choices(name, spec, value)
    raise ElicitationContentInvalid(f"field {name!r} has a type the form cannot take ({kind!r})")


def _checked_choices(name: str, spec: dict[str, Any], value: Any) -> list[str]:
    """A multi-select: distinct choices from `items` (an `enum`, or an `anyOf` of const/title), counted."""
    items = spec.get("items") or {}
    choices = items.get("enum") or [option.get("const") for option in items.get("anyOf") or []]
    if not choices:
        raise ElicitationContentInvalid(f"field {name!r} has a list the form cannot take (its items offer no choices)")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ElicitationContentInvalid(f"field {name!r} must be a list of choices")
    outside = [item for item in value if item not in choices]
    if outside:
        raise ElicitationContentInvalid(
            f"field {name!r} takes only {', '.join(map(str, choices))} (not {outside[0]!r})"
        )
    if len(set(value)) != len(value):
        raise ElicitationContentInvalid(f"field {name!r} names a choice twice")
    if "minItems" in spec and len(value) < spec["minItems"]:
        raise ElicitationContentInvalid(f"field {name!r} needs at least {spec['minItems']} choices")
    if "maxItems" in spec and len(value) > spec["maxItems"]:
        raise ElicitationContentInvalid(f"field {name!r} takes at most {spec['maxItems']} choices")
    return list(value)


def _fits_format(fmt: str | None, value: str) -> bool:
    if fmt == "email":
        return bool(_EMAIL.match(value))
    if fmt == "uri":
        return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$", value))
    try:
        if fmt == "date":
            date.fromisoformat(value)
        elif fmt == "date-time":
            datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def result_of(approval: Approval) -> mcp_types.ElicitResult:
    """The spec's answer for a closed elicitation approval."""
    decision = approval.decision
    if approval.status == "allowed" and decision is not None:
        schema = approval.arguments.get("schema") or {}
        try:
            content = checked_content(schema, decision.updated_arguments)
        except ElicitationContentInvalid:
            return mcp_types.ElicitResult(action="cancel")  # never send a server what it did not ask for
        return mcp_types.ElicitResult(action="accept", content=content)
    if approval.status == "denied":
        return mcp_types.ElicitResult(action="decline")
    return mcp_types.ElicitResult(action="cancel")  # cancelled, expired (no answer in time), stopped


class ElicitationDesk:
    """Puts a server's question to the person as an approval and returns their answer."""

    def __init__(self, broker: ApprovalBroker, sessions: WaitingSink) -> None:
        self._broker = broker
        self._sessions = sessions

    async def ask(self, question: Elicitation) -> mcp_types.ElicitResult:
        """Open the approval in the call's session, wait (bounded by its expiry), map the answer."""
        call = question.call
        approval = await ask_and_wait(
            self._broker,
            self._sessions,
            session_id=call.session_id,
            kind="elicitation",
            tool_call_id=f"elicitation:{call.call_id or '-'}:{uuid.uuid4().hex[:8]}",
            tool_name=call.tool,
            arguments={
                "server": call.server,
                "message": question.message,
                "schema": question.requested_schema,
                "call_id": call.call_id,
            },
            reason=question.message,
        )
        return result_of(approval)
