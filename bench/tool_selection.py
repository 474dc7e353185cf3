"""Tool selection (issue 19): does BM25 find the tool a request needs among hundreds, and what does it save?

A catalog of 300+ tools written like real MCP servers' (trackers, chat, mail, databases, cloud,
payments, CRM, monitoring, ...), generated from templates, and 100+ requests, each naming the
tool it needs in a person's words (paraphrased verbs and nouns, not the description's). For each
request: the rank BM25 gives the needed tool (recall@5/10/20), whether the turn's selection with
the default settings shows it, the prompt tokens the selection saves against sending every tool
(JSON characters / 4), and the CPU time of one selection. BM25 only: the embedding model and the
hybrid (`tool_selection.method: hybrid`) are measured by bench/tool_selection_embeddings.py on the
same catalog and requests. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import percentiles  # noqa: E402

from backend.config import ToolSelectionConfig  # noqa: E402
from backend.domain.models import Message  # noqa: E402
from backend.domain.tools import ToolAnnotations, ToolInfo  # noqa: E402
from backend.engine.loop import tool_schemas  # noqa: E402
from backend.engine.turns.bm25 import Bm25Index  # noqa: E402
from backend.engine.turns.tool_selection import select_tools  # noqa: E402

# server: (product, [(entity, plural, [what people call it])])
DOMAINS: dict[str, tuple[str, list[tuple[str, str, list[str]]]]] = {
    "github": ("GitHub", [("issue", "issues", ["bug report", "issue"]), ("pull_request", "pull requests", ["PR", "pull request"]), ("release", "releases", ["release"])]),
    "gitlab": ("GitLab", [("merge_request", "merge requests", ["MR", "merge request"]), ("pipeline", "pipelines", ["CI pipeline", "build pipeline"])]),
    "jira": ("Jira", [("ticket", "tickets", ["ticket", "story"]), ("sprint", "sprints", ["sprint", "iteration"])]),
    "linear": ("Linear", [("project", "projects", ["project"]), ("cycle", "cycles", ["cycle"])]),
    "slack": ("Slack", [("channel", "channels", ["channel", "room"]), ("reminder", "reminders", ["reminder"])]),
    "discord": ("Discord", [("server_role", "server roles", ["role"]), ("thread", "threads", ["thread"])]),
    "gmail": ("Gmail", [("draft", "drafts", ["draft", "unsent email"]), ("label", "labels", ["label", "mail folder"])]),
    "calendar": ("Google Calendar", [("event", "events", ["meeting", "event", "appointment"]), ("calendar", "calendars", ["calendar"])]),
    "drive": ("Google Drive", [("document", "documents", ["doc", "document"]), ("folder", "folders", ["folder", "directory"])]),
    "notion": ("Notion", [("page", "pages", ["page", "note"]), ("database", "databases", ["table", "database"])]),
    "confluence": ("Confluence", [("space", "spaces", ["space", "wiki space"]), ("article", "articles", ["wiki article", "article"])]),
    "postgres": ("PostgreSQL", [("table", "tables", ["table"]), ("index", "indexes", ["index"])]),
    "mongodb": ("MongoDB", [("collection", "collections", ["collection"]), ("document_record", "document records", ["record", "document record"])]),
    "redis": ("Redis", [("key", "keys", ["key", "cache entry"]), ("stream", "streams", ["stream"])]),
    "s3": ("Amazon S3", [("bucket", "buckets", ["bucket"]), ("object", "objects", ["object", "stored file"])]),
    "ec2": ("Amazon EC2", [("instance", "instances", ["VM", "server", "instance"]), ("security_group", "security groups", ["firewall group", "security group"])]),
    "kubernetes": ("Kubernetes", [("deployment", "deployments", ["deployment"]), ("pod", "pods", ["pod", "container"])]),
    "docker": ("Docker", [("image", "images", ["image", "container image"]), ("volume", "volumes", ["volume"])]),
    "stripe": ("Stripe", [("customer", "customers", ["customer", "payer"]), ("subscription", "subscriptions", ["subscription", "plan"])]),
    "shopify": ("Shopify", [("product", "products", ["product", "item for sale"]), ("order", "orders", ["order", "purchase"])]),
    "salesforce": ("Salesforce", [("opportunity", "opportunities", ["deal", "opportunity"]), ("account", "accounts", ["account", "client company"])]),
    "hubspot": ("HubSpot", [("contact", "contacts", ["contact", "lead"]), ("campaign", "campaigns", ["campaign", "email blast"])]),
    "zendesk": ("Zendesk", [("support_ticket", "support tickets", ["support ticket", "customer complaint"]), ("macro", "macros", ["macro", "canned reply"])]),
    "twilio": ("Twilio", [("phone_number", "phone numbers", ["phone number", "number"]), ("call_log", "call logs", ["call log", "call record"])]),
    "sentry": ("Sentry", [("error_event", "error events", ["crash", "error event", "exception"]), ("alert_rule", "alert rules", ["alert rule"])]),
    "datadog": ("Datadog", [("monitor", "monitors", ["monitor", "check"]), ("dashboard", "dashboards", ["dashboard", "graph board"])]),
    "pagerduty": ("PagerDuty", [("incident", "incidents", ["incident", "outage"]), ("schedule", "schedules", ["on-call schedule", "rota"])]),
    "figma": ("Figma", [("design_file", "design files", ["design", "mockup"]), ("comment", "comments", ["comment", "design feedback"])]),
    "airtable": ("Airtable", [("base", "bases", ["base"]), ("row", "rows", ["row", "record"])]),
    "trello": ("Trello", [("card", "cards", ["card", "task"]), ("board", "boards", ["board"])]),
    "spotify": ("Spotify", [("playlist", "playlists", ["playlist", "mix"]), ("track", "tracks", ["song", "track"])]),
    "contacts": ("the address book", [("person", "people", ["person", "contact card"])]),
}

OPERATIONS = {
    "list": (
        "List the {plural} in {product}, newest first. Filters by text and paginates with a cursor.",
        ["show me all the {noun}s", "what {noun}s do we have", "give me an overview of every {noun}"],
    ),
    "get": (
        "Get one {product} {entity} by its id, with every field and its history.",
        ["fetch the details of {noun} 4411", "look up the {noun} with id 93", "show me {noun} 2020 in full"],
    ),
    "create": (
        "Create a new {entity} in {product} from the fields given. Returns the new {entity}'s id and URL.",
        ["make a new {noun}", "add a {noun} for the launch", "set up a fresh {noun}"],
    ),
    "update": (
        "Update fields of an existing {product} {entity}; fields not given are left unchanged.",
        ["change the name of {noun} 77", "edit {noun} 12, it has a typo", "modify the {noun} we made yesterday"],
    ),
    "delete": (
        "Delete a {product} {entity} permanently. This cannot be undone.",
        ["remove {noun} 31", "get rid of the old {noun}", "throw away {noun} 8, we do not need it"],
    ),
}

# Tools no template writes: (server, tool, description, a request that needs it).
SPECIAL = [
    ("github", "merge_pull_request", "Merge a pull request once its checks pass (merge, squash or rebase).", "ship PR 312 into main now that CI is green"),
    ("github", "search_code", "Search code across GitHub repositories by text or symbol.", "where in our repos is the function parse_invoice defined"),
    ("gitlab", "retry_pipeline", "Retry the failed jobs of a GitLab pipeline.", "the GitLab build failed on a flaky job, run it again"),
    ("jira", "transition_ticket", "Move a Jira ticket to another workflow status (To Do, In Progress, Done).", "mark Jira story APP-9 as done"),
    ("slack", "post_message", "Post a message to a Slack channel or thread, as the bot.", "tell #deploys on Slack that the release went out"),
    ("slack", "add_reaction", "Add an emoji reaction to a Slack message.", "put a thumbs-up emoji on that Slack message"),
    ("gmail", "send_email", "Send an email with subject, body and attachments to one or more recipients.", "mail the quarterly report to anna@example.com"),
    ("gmail", "search_inbox", "Search the Gmail inbox with Gmail's query syntax (from:, subject:, has:attachment).", "find the emails from the landlord with attachments"),
    ("calendar", "find_free_time", "Find times when all the given attendees are free in Google Calendar.", "when are Bob and I both available next week"),
    ("postgres", "run_query", "Run a read-only SQL query against the PostgreSQL database and return the rows.", "how many users signed up last month, run a select on the db"),
    ("postgres", "explain_query", "Show the query plan of a SQL statement (EXPLAIN ANALYZE).", "why is this SQL slow, show me its execution plan"),
    ("redis", "flush_cache", "Remove every key of the current Redis database.", "wipe the whole redis cache"),
    ("s3", "presign_url", "Create a time-limited download link for an S3 object.", "give me a temporary link to share the backup file in our bucket"),
    ("ec2", "reboot_instance", "Reboot an EC2 instance.", "restart the VM i-0abc that hangs"),
    ("kubernetes", "scale_deployment", "Set the number of replicas of a Kubernetes deployment.", "run 5 replicas of the api deployment"),
    ("kubernetes", "pod_logs", "Read the logs of a Kubernetes pod's container.", "show the output the checkout pod printed"),
    ("docker", "build_image", "Build a Docker image from a Dockerfile and tag it.", "build the container from our Dockerfile and tag it v2"),
    ("stripe", "create_refund", "Refund a Stripe charge, in full or in part.", "give the customer their money back for charge ch_123"),
    ("stripe", "list_invoices", "List a Stripe customer's invoices with their amounts and status.", "what bills have we sent to customer cus_9 and are they paid"),
    ("shopify", "adjust_inventory", "Change the stock level of a Shopify product variant at a location.", "we got 40 more blue mugs in the warehouse, bump the stock"),
    ("zendesk", "reply_to_ticket", "Reply to a Zendesk support ticket, publicly or as an internal note.", "answer the customer complaint 881 saying we are on it"),
    ("twilio", "send_sms", "Send an SMS text message from a Twilio number.", "text +15550100 that the courier is outside"),
    ("sentry", "resolve_issue", "Mark a Sentry issue as resolved, optionally in the next release.", "the null pointer crash is fixed, close it out in Sentry"),
    ("datadog", "query_metrics", "Query Datadog metrics over a time range (avg, max, p95).", "what was the p95 latency of the api over the last hour"),
    ("pagerduty", "acknowledge_incident", "Acknowledge a PagerDuty incident so escalation stops.", "I am looking at the outage, stop paging people"),
    ("figma", "export_frame", "Export a Figma frame as PNG, SVG or PDF.", "get me a PNG of the login screen mockup"),
    ("spotify", "play_track", "Start playing a track on the user's active Spotify device.", "put on Bohemian Rhapsody"),
    ("weather", "get_forecast", "Get the weather forecast (temperature, rain, wind) for a city for the next days.", "will it rain in Lisbon tomorrow"),
    ("weather", "air_quality", "Get the air quality index and pollutants for a location.", "is the air in Delhi safe to run in today"),
    ("maps", "directions", "Driving, walking or transit directions and travel time between two places.", "how do I get from the station to the museum on foot"),
    ("maps", "geocode", "Turn an address into latitude and longitude.", "what are the coordinates of 10 Downing Street"),
    ("translate", "translate_text", "Translate text between languages, detecting the source language.", "say 'where is the bathroom' in Japanese"),
    ("finance", "stock_quote", "Get the latest price of a stock ticker.", "how is AAPL trading right now"),
    ("finance", "exchange_rate", "Convert an amount between currencies at today's rate.", "how much is 250 euros in dollars"),
    ("web", "fetch_url", "Fetch a web page and return its text as Markdown.", "read https://example.com/changelog for me"),
    ("web", "web_search", "Search the web and return the top results with snippets.", "look online for reviews of the new ThinkPad"),
    ("pdf", "extract_text", "Extract the text of a PDF file, page by page.", "pull the words out of contract.pdf"),
    ("image", "resize_image", "Resize or crop an image file to the given dimensions.", "shrink logo.png to 200 by 200 pixels"),
    ("ocr", "read_image_text", "Recognise the text in a photo or scanned image (OCR).", "what does the receipt in scan.jpg say"),
    ("time", "convert_timezone", "Convert a time from one time zone to another.", "what is 9am New York time in Tokyo"),
]

CORE = [
    ("file", "read_file", "Read a text file in the workspace."),
    ("file", "write_file", "Write a file in the workspace, replacing it."),
    ("file", "edit_file", "Replace exact text in a workspace file."),
    ("file", "list_directory", "List the entries of a workspace directory."),
    ("file", "search_files", "Search workspace files by name or content."),
    ("shell", "exec", "Run `bash -c command` in the workspace and return its output and exit code."),
]


def schema_for(operation: str, entity: str) -> dict:
    """Plausible input schemas: their size is most of what a tool costs in a prompt."""
    word = entity.replace("_", " ")
    props: dict[str, dict] = {}
    if operation == "list":
        props = {
            "query": {"type": "string", "description": f"Text to filter {word}s by."},
            "limit": {"type": "integer", "description": "At most this many (default 50).", "minimum": 1, "maximum": 200},
            "cursor": {"type": "string", "description": "The `next_cursor` of the previous page."},
        }
    elif operation in ("get", "delete"):
        props = {"id": {"type": "string", "description": f"The {word}'s id."}}
    else:
        props = {
            "id": {"type": "string", "description": f"The {word}'s id (update only)."},
            "name": {"type": "string", "description": f"The {word}'s name or title."},
            "description": {"type": "string", "description": "Free text, Markdown allowed."},
            "fields": {"type": "object", "description": "Other fields by name.", "additionalProperties": True},
        }
        if operation == "create":
            props.pop("id")
    return {"type": "object", "properties": props, "required": ["id"] if "id" in props and operation != "list" else []}


def tool(server: str, name: str, description: str, schema: dict | None = None, title: str | None = None) -> ToolInfo:
    return ToolInfo(
        name=f"mcp__{server}__{name}",
        server=server,
        tool=name,
        description=description,
        input_schema=schema or {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]},
        annotations=ToolAnnotations(title=title),
    )


def catalog_and_requests(seed: int) -> tuple[list[ToolInfo], list[tuple[str, str]]]:
    """The tools and (request, needed tool) pairs; the same for the same seed."""
    rng = random.Random(seed)
    tools = [tool(*spec) for spec in CORE]
    requests: list[tuple[str, str]] = []
    for server, (product, entities) in DOMAINS.items():
        for entity, plural, nouns in entities:
            for operation, (template, phrasings) in OPERATIONS.items():
                noun_plural = plural.replace(" ", "_")
                name = f"{operation}_{noun_plural if operation == 'list' else entity}"
                words = entity.replace("_", " ")
                description = template.format(product=product, entity=words, plural=plural)
                title = f"{operation.capitalize()} {plural if operation == 'list' else words}"
                tools.append(tool(server, name, description, schema_for(operation, entity), title))
                # Half of the generated tools get a request, in words of their own.
                if rng.random() < 0.5:
                    said = rng.choice(phrasings).format(noun=rng.choice(nouns))
                    # A person names the product often, not always.
                    where = f" in {product}" if rng.random() < 0.7 else ""
                    requests.append((f"{said}{where}", f"mcp__{server}__{name}"))
    for server, name, description, request in SPECIAL:
        tools.append(tool(server, name, description))
        requests.append((request, f"mcp__{server}__{name}"))
    return tools, requests


def tokens(tools: list[ToolInfo]) -> int:
    """Prompt tokens of the tool definitions, estimated as JSON characters / 4."""
    return len(json.dumps(tool_schemas(tools))) // 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args()
    tools, requests = catalog_and_requests(args.seed)
    config = ToolSelectionConfig()

    async def nowhere(names: list[str]) -> None:
        return None

    started = time.process_time()
    selection = select_tools(tools, config, found=[], remember=nowhere)
    build_ms = (time.process_time() - started) * 1000
    assert selection is not None
    index: Bm25Index = selection.index

    ranks: list[int | None] = []
    shown_hits = 0
    saved: list[int] = []
    shown_counts: list[int] = []
    cpu_ms: list[float] = []
    everything = tokens(tools)
    for text, needed in requests:
        ranked = [t.name for t in index.rank(text, limit=len(tools))]
        ranks.append(ranked.index(needed) + 1 if needed in ranked else None)
        history = [Message(session_id="bench", role="user", content=text)]
        began = time.process_time()
        shown = selection.offer(history, [])
        cpu_ms.append((time.process_time() - began) * 1000)
        shown_hits += needed in {t.name for t in shown}
        shown_counts.append(len(shown))
        saved.append(everything - tokens(shown))

    def recall(k: int) -> float:
        return round(sum(1 for r in ranks if r is not None and r <= k) / len(ranks), 3)

    found_ranks = sorted(r for r in ranks if r is not None)
    print(
        json.dumps(
            {
                "method": "bm25 (names x2, titles x2, descriptions; crude stemming)",
                "tools": len(tools),
                "requests": len(requests),
                "recall_at_5": recall(5),
                "recall_at_10": recall(10),
                "recall_at_20": recall(20),
                "mrr": round(sum(1 / r for r in found_ranks) / len(ranks), 3),
                "never_ranked": sum(1 for r in ranks if r is None),
                "selection": {
                    "max_tools": config.max_tools,
                    "relevant": config.relevant,
                    "core_tools": config.core_tools,
                    "needed_tool_shown": round(shown_hits / len(requests), 3),
                    "tools_shown_mean": round(sum(shown_counts) / len(shown_counts), 1),
                },
                "prompt_tokens": {
                    "all_tools_per_turn": everything,
                    "saved_per_turn_mean": round(sum(saved) / len(saved)),
                    "saved_fraction": round(sum(saved) / len(saved) / everything, 3),
                },
                "selection_cpu_per_turn": percentiles(cpu_ms),
                "index_build_cpu_ms": round(build_ms, 3),
                "embeddings": "see bench/tool_selection_embeddings.py",
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
