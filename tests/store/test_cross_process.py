"""Two stores on one database stand for two processes (or two hosts): what they must agree on.

Runs on SQLite (one file) and on Postgres (one database), as every store test does.
"""

from __future__ import annotations

import asyncio

from backend.domain.models import Approval, Event, Message, ToolCallRecord, utcnow


def pending(approval_id: str = "a1") -> Approval:
    return Approval(id=approval_id, session_id="s1", tool_call_id="c1", tool_name="t", expires_at=utcnow())


async def test_two_stores_number_concurrent_appends_gaplessly(store_factory):
    async with store_factory() as here, store_factory() as there:
        events = await asyncio.gather(
            *(
                writer.append_event(Event(session_id="s1", seq=0, type="notice", data={"i": i}))
                for i in range(60)
                for writer in [(here, there)[i % 2]]
            ),
            *(writer.add_message(Message(session_id="s1", role="user", content="m")) for writer in (here, there) * 10),
        )
        assert sorted(e.seq for e in events[:60]) == list(range(1, 61))
        assert sorted(m.idx for m in events[60:]) == list(range(20))
        assert [e.seq for e in await there.list_events("s1")] == list(range(1, 61))
        assert await here.last_seq("s1") == 60


async def test_two_stores_finishing_calls_at_once_number_messages_and_events_gaplessly(store_factory):
    # A finish numbers a message and an event in one transaction: both stay gapless and distinct.
    async with store_factory() as here, store_factory() as there:
        written = await asyncio.gather(
            *(
                writer.finish_tool_call(
                    ToolCallRecord(id=f"c{i}", session_id="s1", name="t", arguments={}),
                    Message(session_id="s1", role="tool", content=f"r{i}", tool_call_id=f"c{i}"),
                    event=Event(session_id="s1", seq=0, type="tool.result", data={"id": f"c{i}"}),
                )
                for i in range(40)
                for writer in [(here, there)[i % 2]]
            )
        )
        assert sorted(w.message.idx for w in written) == list(range(40))
        assert sorted(w.event.seq for w in written) == list(range(1, 41))
        stored = {m.content: m.idx for m in await there.list_messages("s1")}
        assert stored == {w.message.content: w.message.idx for w in written}
        assert [e.data["id"] for e in await here.list_events("s1")] == [
            w.event.data["id"] for w in sorted(written, key=lambda w: w.event.seq)
        ]


async def test_exactly_one_of_two_concurrent_answers_closes_an_approval(store_factory):
    async with store_factory() as here, store_factory() as there:
        await here.save_approval(pending())
        allowed = pending().model_copy(update={"status": "allowed"})
        denied = pending().model_copy(update={"status": "denied"})
        results = await asyncio.gather(here.close_approval(allowed), there.close_approval(denied))
        assert sorted(results) == [False, True]
        winner = "allowed" if results[0] else "denied"
        assert (await there.get_approval("a1")).status == winner
        assert (await here.approval_statuses(["a1", "missing"])) == {"a1": winner}


async def test_an_answer_from_another_store_changes_the_data_version(store_factory):
    # The approval watch reads data_version each tick and re-reads statuses only when it moved.
    async with store_factory() as here, store_factory() as there:
        await there.save_approval(pending())
        before = await here.data_version()
        assert await there.close_approval(pending().model_copy(update={"status": "allowed"}))
        assert await here.data_version() != before
        assert await here.approval_statuses(["a1"]) == {"a1": "allowed"}


async def test_a_call_waiting_in_one_store_hears_an_answer_given_in_another(store_factory):
    from backend.approvals.watch import ApprovalWatch

    async with store_factory() as here, store_factory() as there:
        await here.save_approval(pending())
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        watch = ApprovalWatch(here, {"a1": waiter}, interval=0.01)
        with watch.watching("a1"):
            await asyncio.wait_for(watch.active.wait(), 5)
            assert await there.close_approval(pending().model_copy(update={"status": "allowed"}))
            await asyncio.wait_for(waiter, 5)
        await watch.close()
