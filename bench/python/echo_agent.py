"""The official Python SDK side of a2a-kit's benchmarks (`bash bench/run.sh`).

An agent on `a2a-sdk` (pinned in bench/run.sh) served by uvicorn, doing what the Rust bench
servers do, with the SDK's own DefaultRequestHandler and InMemoryTaskStore:

* no `metadata.skillId` (W1, W3 tasks): the hello agent. The task is published SUBMITTED, goes
  WORKING, gets one artifact `Hello, <text>!` and completes with the same text as its status
  message (what a2a-kit's `hello` returns);
* `skillId: count`, text N (W2): N artifact chunks `"<i>\\n"` appended to one artifact;
* `skillId: hold`, text S (W3 streams): one chunk, then S seconds of nothing, then COMPLETED.

JSON-RPC is served at `/`, like the Rust servers, so every client sends the same bytes to
the same path. Usage: `python echo_agent.py --port 41241 [--database-url postgres://USER@HOST:PORT/DB]`

With `--database-url` the task store is the SDK's DatabaseTaskStore (SQLAlchemy async + asyncpg,
`a2a-sdk[postgresql]`) on that PostgreSQL database instead of InMemoryTaskStore: its `tasks`
table is dropped and created anew at each start, so every run starts from an empty table.
"""

import argparse
import asyncio
import contextlib
import os

# The SDK wraps every internal call in an OpenTelemetry span unless this is off; with no
# tracer configured that is pure overhead, so give the SDK its best case.
os.environ.setdefault('OTEL_INSTRUMENTATION_A2A_SDK_ENABLED', 'false')

import uvicorn
from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import DatabaseTaskStore, InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)


class BenchExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        metadata = context.message.metadata if context.message else None
        skill = metadata['skillId'] if metadata is not None and 'skillId' in metadata else 'greet'
        if not context.current_task:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message],
                )
            )
        up = TaskUpdater(event_queue, context.task_id, context.context_id)
        await up.start_work()
        if skill == 'count':
            n = min(int(text.strip() or '5'), 100_000)
            artifact_id = 'count'
            for i in range(1, n + 1):
                await up.add_artifact(
                    [Part(text=f'{i}\n')],
                    artifact_id=artifact_id,
                    name='count',
                    append=i > 1,
                    last_chunk=i == n,
                )
            await up.complete()
        elif skill == 'hold':
            secs = min(float(text.strip() or '60'), 3600)
            await up.add_artifact([Part(text='open\n')], artifact_id='hold', name='hold')
            await asyncio.sleep(secs)
            await up.complete()
        else:
            reply = f'Hello, {text.strip()}!'
            await up.add_artifact([Part(text=reply)], name='result', last_chunk=True)
            await up.complete(message=up.new_agent_message(parts=[Part(text=reply)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def database_store(database_url: str) -> tuple[DatabaseTaskStore, contextlib.AbstractAsyncContextManager]:
    """The SDK's PostgreSQL task store, and the lifespan that empties its table at start."""
    from sqlalchemy.ext.asyncio import create_async_engine

    from a2a.server.models import TaskModel

    scheme, sep, rest = database_url.partition('://')
    if not sep or scheme not in ('postgres', 'postgresql', 'postgresql+asyncpg'):
        raise SystemExit(f'--database-url: expected postgres://USER@HOST:PORT/DB, got {database_url!r}')
    # Connections are made lazily, on uvicorn's event loop (asyncpg ties each to its loop).
    engine = create_async_engine(f'postgresql+asyncpg://{rest}')
    store = DatabaseTaskStore(engine)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette):
        async with engine.begin() as conn:
            await conn.run_sync(TaskModel.__table__.drop, checkfirst=True)
        await store.initialize()  # creates the table again (create_table=True)
        yield
        await engine.dispose()

    return store, lifespan


def app(port: int, database_url: str | None = None) -> Starlette:
    url = f'http://127.0.0.1:{port}/'
    card = AgentCard(
        name='Hello Agent',
        description='A friendly agent that greets people.',
        version='0.1.0',
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[
            AgentSkill(id='greet', name='Greet', description='Greet the user by name.', tags=['greeting']),
            AgentSkill(id='count', name='Count', description='Count from 1 to N.', tags=['streaming']),
            AgentSkill(id='hold', name='Hold', description='Keep the stream open.', tags=['streaming']),
        ],
        supported_interfaces=[AgentInterface(protocol_binding='JSONRPC', protocol_version='1.0', url=url)],
    )
    store, lifespan = database_store(database_url) if database_url else (InMemoryTaskStore(), None)
    handler = DefaultRequestHandler(agent_executor=BenchExecutor(), task_store=store, agent_card=card)
    return Starlette(
        routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url='/')],
        lifespan=lifespan,
    )


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--port', type=int, default=41241)
    parser.add_argument('--database-url', help='postgres://USER@HOST:PORT/DB: DatabaseTaskStore there')
    args = parser.parse_args()
    # One process, one event loop: uvicorn's fastest settings (uvloop + httptools, installed by
    # bench/run.sh), access log off.
    uvicorn.run(
        app(args.port, args.database_url),
        host='127.0.0.1',
        port=args.port,
        log_level='warning',
        access_log=False,
        loop='uvloop',
        http='httptools',
    )
