"""A tool catalog for the ranking and selection tests: twenty real-sounding tools and 200 fillers."""

from __future__ import annotations

from backend.domain.tools import ToolAnnotations, ToolInfo

SPECS = [
    ("file", "read_file", "Read a text file in the workspace and return its contents."),
    ("file", "write_file", "Write text to a file in the workspace, replacing it."),
    ("shell", "exec", "Run a bash command in the workspace and return its output and exit code."),
    ("github", "create_issue", "Open a new issue in a GitHub repository with a title and body."),
    ("github", "list_pull_requests", "List the open pull requests of a GitHub repository."),
    ("github", "merge_pull_request", "Merge a pull request once its checks pass."),
    ("jira", "transition_ticket", "Move a Jira ticket to another workflow status."),
    ("slack", "post_message", "Post a message to a Slack channel."),
    ("slack", "list_channels", "List the Slack channels the bot can see."),
    ("postgres", "run_query", "Run a read-only SQL query against the Postgres database."),
    ("postgres", "list_tables", "List the tables of a database schema."),
    ("stripe", "create_refund", "Refund a Stripe charge, in full or in part."),
    ("stripe", "list_invoices", "List a customer's invoices."),
    ("aws", "start_instance", "Start a stopped EC2 instance."),
    ("aws", "upload_object", "Upload a file to an S3 bucket."),
    ("calendar", "create_event", "Create a calendar event with attendees and a time."),
    ("gmail", "send_email", "Send an email to one or more recipients."),
    ("weather", "get_forecast", "Get the weather forecast for a city."),
    ("maps", "directions", "Driving or walking directions between two places."),
    ("notion", "search_pages", "Search the pages of a Notion workspace by text."),
]


def tool(server: str, name: str, description: str, title: str | None = None) -> ToolInfo:
    return ToolInfo(
        name=f"mcp__{server}__{name}",
        server=server,
        tool=name,
        description=description,
        annotations=ToolAnnotations(title=title),
    )


TOOLS = [tool(*spec) for spec in SPECS]
# Filler so the catalog is large: tools that share no word with any query below.
FILLER = [tool(f"misc{i}", f"thing_{i}", f"Frobnicate widget number {i} of the quux subsystem.") for i in range(200)]
MANY = TOOLS + FILLER
