"""An A2A v0.3 agent built on the official Python SDK (a2a-sdk 0.3.26, pinned), for
tests/interop_v03.rs: the reference the v0.3 client scripts are developed against, and the
server the a2a-kit client is tested against.

Usage: python py_server.py [PORT]

Binds 127.0.0.1 on PORT (a free one when omitted or 0) and, once it serves, prints ONE line on
stdout: its base URL (`http://127.0.0.1:PORT`). It serves, with the SDK's own applications:

- the card at /.well-known/agent-card.json (protocolVersion 0.3.0; `url` the JSON-RPC
  endpoint, `preferredTransport` JSONRPC, `additionalInterfaces` JSONRPC and HTTP+JSON);
- JSON-RPC at /a2a/jsonrpc (`A2AFastAPIApplication`, the FastAPI flavour of
  `A2AStarletteApplication`), with the extended card (`agent/getAuthenticatedExtendedCard`);
- HTTP+JSON at /a2a/rest (`A2ARESTFastAPIApplication`: /a2a/rest/v1/message:send, ...);
- push notifications: `InMemoryPushNotificationConfigStore` and the SDK's
  `BasePushNotificationSender` (POSTs the task, `X-A2A-Notification-Token` carrying the token).

What the agent does is keyed on the prefix of the incoming messageId, the same prefixes as the
a2a-kit conformance agent (examples/src/conformance.rs), so one client script runs against
both; the skills the card lists are the same behaviours by name:

  tck-complete-task            COMPLETED, status message "Hello from TCK" (also as the reply to
                               a task waiting for input: the `ask` skill's second turn)
  tck-input-required           INPUT_REQUIRED "Please provide more input" (the `ask` skill)
  tck-artifact-text            a text artifact "Generated text content", then COMPLETED
  tck-artifact-file            a file artifact (bytes "Generated file content", output.txt,
                               text/plain), then COMPLETED
  tck-artifact-file-url        a file artifact (uri https://example.com/output.txt), COMPLETED
  tck-artifact-data            a data artifact {"key": "value", "count": 42}, then COMPLETED
  tck-message-response         a direct Message "Direct message response" (no task)
  tck-reject-task              REJECTED
  tck-stream-001 (and -003, tck-stream-ordering-001, tck-stream-artifact-text)
                               WORKING, a text artifact, COMPLETED
  tck-stream-artifact-chunked  WORKING, "chunk-1 " then append + lastChunk "chunk-2", COMPLETED
                               (the `chunks` skill)
  test-resubscribe-message-id  WORKING for SLOW seconds (1.5; cancelable), then COMPLETED
  anything else                by the first word of the text (for clients that do not pick
                               their messageIds):
                                 ask         INPUT_REQUIRED "What is your name?"; the reply
                                             completes the task with "Hello, {reply}"
                                 chunks N    an artifact streamed in N chunks (append /
                                             lastChunk), then COMPLETED
                                 slow SECS   WORKING for SECS seconds (cancelable), COMPLETED
                                 otherwise   an artifact echoing the text, status message the
                                             text, COMPLETED (the `echo` skill)
"""

import asyncio
import socket
import sys
import uuid

import httpx
import uvicorn
from fastapi import FastAPI

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AFastAPIApplication, A2ARESTFastAPIApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    DataPart,
    FilePart,
    FileWithBytes,
    FileWithUri,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
    TransportProtocol,
)

HOST = '127.0.0.1'
SLOW = 1.5

PREFIXES = [
    'tck-complete-task',
    'tck-input-required',
    'tck-artifact-text',
    'tck-artifact-file-url',
    'tck-artifact-file',
    'tck-artifact-data',
    'tck-message-response',
    'tck-reject-task',
    'tck-stream-001',
    'tck-stream-003',
    'tck-stream-ordering-001',
    'tck-stream-artifact-text',
    'tck-stream-artifact-chunked',
    'tck-stream-002',
    'test-resubscribe-message-id',
]


def behaviour(message_id: str) -> str:
    """The longest matching prefix, or 'echo'."""
    hits = [p for p in PREFIXES if message_id.startswith(p)]
    return max(hits, key=len) if hits else 'echo'


def text(t: str) -> Part:
    return Part(root=TextPart(text=t))


class InteropExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        kind = behaviour(message.message_id)
        if kind == 'tck-message-response':
            await event_queue.enqueue_event(
                Message(
                    role=Role.agent,
                    message_id=str(uuid.uuid4()),
                    context_id=context.context_id,
                    parts=[text('Direct message response')],
                )
            )
            return
        task = context.current_task
        if task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.submitted),
                    history=[message],
                )
            )
        up = TaskUpdater(event_queue, context.task_id, context.context_id)

        def say(t: str) -> Message:
            return up.new_agent_message([text(t)])

        waiting = task is not None and task.status.state == TaskState.input_required
        await up.start_work()
        if kind == 'tck-input-required':
            await up.requires_input(message=say('Please provide more input'), final=True)
        elif kind == 'tck-complete-task':
            await up.complete(message=say('Hello from TCK'))
        elif kind in ('tck-artifact-text', 'tck-stream-001', 'tck-stream-003', 'tck-stream-ordering-001', 'tck-stream-artifact-text'):
            await up.add_artifact([text('Generated text content')], name='answer', last_chunk=True)
            await up.complete(message=say('Generated text content'))
        elif kind == 'tck-artifact-file':
            file = FileWithBytes(bytes='R2VuZXJhdGVkIGZpbGUgY29udGVudA==', name='output.txt', mime_type='text/plain')
            await up.add_artifact([Part(root=FilePart(file=file))], name='output.txt', last_chunk=True)
            await up.complete()
        elif kind == 'tck-artifact-file-url':
            file = FileWithUri(uri='https://example.com/output.txt', name='output.txt', mime_type='text/plain')
            await up.add_artifact([Part(root=FilePart(file=file))], name='output.txt', last_chunk=True)
            await up.complete()
        elif kind == 'tck-artifact-data':
            await up.add_artifact([Part(root=DataPart(data={'key': 'value', 'count': 42}))], name='data', last_chunk=True)
            await up.complete()
        elif kind == 'tck-reject-task':
            await up.reject(message=say('Task rejected by the reference agent'))
        elif kind == 'tck-stream-artifact-chunked':
            artifact_id = str(uuid.uuid4())
            await up.add_artifact([text('chunk-1 ')], artifact_id=artifact_id, name='chunked', append=False, last_chunk=False)
            await asyncio.sleep(0.02)
            await up.add_artifact([text('chunk-2')], artifact_id=artifact_id, name='chunked', append=True, last_chunk=True)
            await up.complete()
        elif kind == 'tck-stream-002':
            await up.complete()
        elif kind == 'test-resubscribe-message-id':
            await asyncio.sleep(SLOW)
            await up.complete(message=say('Resubscribe test complete'))
        else:
            await self.by_text(context, up, say, waiting)

    async def by_text(self, context: RequestContext, up: TaskUpdater, say, waiting: bool) -> None:
        answer = context.get_user_input()
        word, _, arg = answer.strip().partition(' ')
        if waiting:
            await up.add_artifact([text(f'Hello, {answer}')], name='greeting', last_chunk=True)
            await up.complete(message=say(f'Hello, {answer}'))
        elif word == 'ask':
            await up.requires_input(message=say('What is your name?'), final=True)
        elif word == 'chunks':
            n = max(1, int(arg or '3'))
            artifact_id = str(uuid.uuid4())
            for i in range(n):
                await asyncio.sleep(0.02)
                await up.add_artifact([text(f'c{i} ')], artifact_id=artifact_id, name='chunks', append=i > 0, last_chunk=i == n - 1)
            await up.complete()
        elif word == 'slow':
            await asyncio.sleep(float(arg or SLOW))
            await up.complete(message=say(f'slept {arg or SLOW}'))
        else:
            await up.add_artifact([text(answer)], name='echo', last_chunk=True)
            await up.complete(message=say(answer))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def cards(base: str) -> tuple[AgentCard, AgentCard]:
    jsonrpc, rest = f'{base}/a2a/jsonrpc', f'{base}/a2a/rest'
    skills = [
        AgentSkill(id='echo', name='echo', description='Completes with an artifact echoing the text', tags=['interop']),
        AgentSkill(id='ask', name='ask', description='INPUT_REQUIRED, then completes on the reply', tags=['interop']),
        AgentSkill(id='chunks', name='chunks', description='Streams an artifact in chunks', tags=['interop']),
    ]
    card = AgentCard(
        name='a2a-sdk 0.3 reference agent',
        description='The official Python SDK (0.3), serving the a2a-kit v0.3 interop tests',
        version='1.0.0',
        protocol_version='0.3.0',
        url=jsonrpc,
        preferred_transport=TransportProtocol.jsonrpc,
        additional_interfaces=[
            AgentInterface(transport=TransportProtocol.jsonrpc, url=jsonrpc),
            AgentInterface(transport=TransportProtocol.http_json, url=rest),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=skills,
        supports_authenticated_extended_card=True,
    )
    extended = card.model_copy(
        update={
            'name': f'{card.name} (extended)',
            'skills': [*skills, AgentSkill(id='extended', name='extended', description='Only in the extended card', tags=['x'])],
        }
    )
    return card, extended


def build_app(base: str) -> FastAPI:
    card, extended = cards(base)
    push_store = InMemoryPushNotificationConfigStore()
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        push_config_store=push_store,
        push_sender=BasePushNotificationSender(httpx.AsyncClient(timeout=10), push_store),
    )
    app = A2AFastAPIApplication(agent_card=card, http_handler=handler, extended_agent_card=extended).build(
        rpc_url='/a2a/jsonrpc'
    )
    rest = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler, extended_agent_card=extended).build()
    app.mount('/a2a/rest', rest)
    return app


async def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    base = f'http://{HOST}:{sock.getsockname()[1]}'
    server = uvicorn.Server(uvicorn.Config(build_app(base), log_level='warning'))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            serving.result()  # raises what stopped it
            sys.exit('uvicorn stopped before serving')
        await asyncio.sleep(0.05)
    print(base, flush=True)
    await serving


if __name__ == '__main__':
    asyncio.run(main())
