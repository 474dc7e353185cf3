"""The wire models of workflows: a definition (steps of modes), and a run of one with its steps.

A run keeps its own copy of each step's mode, template and approve flag, so a run resumed after
a restart follows the definition it started with even if the file changed since.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.domain.models import utcnow

WorkflowSource = Literal["builtin", "user"]
"""Where a definition came from: `modes/workflows/` in the repository, or the data dir's `workflows/`."""

WorkflowRunStatus = Literal["running", "waiting_approval", "completed", "failed", "denied", "stopped"]
ACTIVE_RUN_STATUSES: frozenset[str] = frozenset({"running", "waiting_approval"})

StepRunStatus = Literal["pending", "running", "completed", "error", "stopped", "denied"]
"""`denied`: the gate before the step was denied (or expired), so it never started."""


class WorkflowStep(BaseModel):
    """One step of a definition: a session in `mode` started with `prompt` rendered.

    `prompt` may use `{{input}}` (the run's input) and `{{previous}}` (the previous step's final
    answer). `approve: true` puts a person's approval between this step and the next.
    """

    # Surrounding blank lines of a YAML block scalar are not part of the prompt.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    mode: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    approve: bool = False


class Workflow(BaseModel):
    """A workflow definition as loaded from its YAML file."""

    name: str
    description: str = ""
    steps: list[WorkflowStep] = Field(min_length=1)
    source: WorkflowSource = "builtin"
    path: str = ""
    """The file it was loaded from."""


class StepRun(BaseModel):
    """One step of a run: its definition, the prompt it was given, its session and its answer."""

    index: int
    mode: str
    template: str
    approve: bool = False
    status: StepRunStatus = "pending"
    prompt: str | None = None
    """The prompt the step's session was started with: rendered, or as a person edited it at the gate."""
    session_id: str | None = None
    output: str | None = None
    """The session's final answer; the next step's `{{previous}}`."""
    error: str | None = None
    approval_id: str | None = None
    """The gate approval asked before this step started (when the previous step has `approve`)."""
    prompt_edited: bool = False
    started_at: datetime | None = None
    finished_at: datetime | None = None


class WorkflowRun(BaseModel):
    """One run of a workflow: its status, where it is, and each step."""

    id: str
    workflow: str
    description: str = ""
    input: str
    workspace: str | None = None
    """Where every step's session works; None means the host's default workspace."""
    status: WorkflowRunStatus = "running"
    current: int = 0
    """Index of the step running, or waiting at its gate; the last step once the run has ended."""
    steps: list[StepRun]
    detail: str | None = None
    """Why the run ended as it did: the error, the denial's reason, or who stopped it."""
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_RUN_STATUSES

    def with_step(self, index: int, **changes: Any) -> WorkflowRun:
        """A copy of the run whose step `index` has `changes`."""
        steps = list(self.steps)
        steps[index] = steps[index].model_copy(update=changes)
        return self.model_copy(update={"steps": steps})


class WorkflowRunCreate(BaseModel):
    """Body of `POST /api/workflows/{name}/runs`."""

    model_config = ConfigDict(extra="forbid")

    input: str = Field(max_length=200_000)
    workspace: str | None = Field(default=None, max_length=4096)
