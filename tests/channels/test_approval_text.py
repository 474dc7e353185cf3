"""The words channels send for a question, for every kind of approval there is."""

from __future__ import annotations

from typing import get_args

import pytest

from backend.channels.approval_text import approval_text
from backend.channels.telegram_cards import keyboard
from backend.domain.models import Approval, ApprovalKind, utcnow


def approval(kind: ApprovalKind, **arguments: object) -> Approval:
    return Approval(
        id="a", session_id="s", tool_call_id="c", tool_name="network", kind=kind, arguments=arguments, expires_at=utcnow()
    )


@pytest.mark.parametrize("kind", get_args(ApprovalKind))
def test_every_kind_of_approval_has_words_for_a_channel(kind: ApprovalKind) -> None:
    text = approval_text(approval(kind, host="example.org", port=443))
    assert text.startswith("Approval needed")


def test_a_network_question_names_the_host_and_offers_the_session() -> None:
    question = approval("network", host="example.org", port=443, scheme="https")
    assert "example.org" in approval_text(question)
    labels = [button.text for row in keyboard(question).inline_keyboard for button in row]
    assert "Allow for session" in labels


def test_a_command_outside_the_sandbox_is_offered_once_only() -> None:
    question = approval("unconfined", command="docker ps", outside_sandbox=True)
    assert "OUTSIDE the sandbox" in approval_text(question)
    labels = [button.text for row in keyboard(question).inline_keyboard for button in row]
    assert "Allow for session" not in labels and "Allow once" in labels
