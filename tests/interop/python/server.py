"""An A2A agent built on the official Python SDK (a2a-sdk 1.3.0), for testing the a2a-kit
client against it (tests/interop_python_server.rs).

Usage: python server.py PORT

The first word of the message text picks the behaviour:
  echo TEXT    (default) one artifact with the whole text, then COMPLETED
  slow SECS    WORKING for SECS seconds (cancelable), then an artifact
  chunks N     one artifact streamed in N chunks (append / lastChunk)
  status       three WORKING status messages, then an artifact
  ask          INPUT_REQUIRED "What is your name?"; the reply is greeted
  fail         FAILED with a reason
  direct TEXT  a direct Message reply (no task)
"""

import asyncio
import sys
import uuid

import uvicorn
from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)

HOST = '127.0.0.1'


class InteropExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        cmd, _, arg = text.partition(' ')
        if cmd == 'direct':
            await event_queue.enqueue_event(
                Message(
                    role=Role.ROLE_AGENT,
                    message_id=str(uuid.uuid4()),
                    context_id=context.context_id,
                    parts=[Part(text=f'direct: {arg}')],
                )
            )
            return
        task = context.current_task
        if task is None:
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
        if task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await up.add_artifact([Part(text=f'Hello, {text}')], name='greeting', last_chunk=True)
            await up.complete()
        elif cmd == 'slow':
            secs = float(arg or '3')
            await asyncio.sleep(secs)
            await up.add_artifact([Part(text=f'slept {arg or 3}')], name='slow', last_chunk=True)
            await up.complete()
        elif cmd == 'chunks':
            n = int(arg or '3')
            artifact_id = str(uuid.uuid4())
            for i in range(n):
                await asyncio.sleep(0.02)
                await up.add_artifact(
                    [Part(text=f'c{i} ')],
                    artifact_id=artifact_id,
                    name='chunks',
                    append=i > 0,
                    last_chunk=i == n - 1,
                )
            await up.complete()
        elif cmd == 'status':
            for i in range(1, 4):
                await up.update_status(
                    TaskState.TASK_STATE_WORKING, message=up.new_agent_message([Part(text=f'step {i}')])
                )
            await up.add_artifact([Part(text='final')], name='answer', last_chunk=True)
            await up.complete()
        elif cmd == 'ask':
            await up.requires_input(message=up.new_agent_message([Part(text='What is your name?')]))
        elif cmd == 'fail':
            await up.failed(message=up.new_agent_message([Part(text='it broke')]))
        else:
            await up.add_artifact([Part(text=text)], name='echo', last_chunk=True)
            await up.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def build_app(port: int) -> Starlette:
    base = f'http://{HOST}:{port}'
    skill = AgentSkill(id='interop', name='interop', description='Interop behaviours', tags=['test'])
    card = AgentCard(
        name='Python Interop Agent',
        description='The official Python SDK, serving a2a-kit interop tests',
        version='1.0.0',
        capabilities=AgentCapabilities(streaming=True, push_notifications=True, extended_agent_card=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[skill],
        supported_interfaces=[
            AgentInterface(protocol_binding='JSONRPC', protocol_version='1.0', url=f'{base}/a2a/jsonrpc'),
            AgentInterface(protocol_binding='HTTP+JSON', protocol_version='1.0', url=f'{base}/a2a/rest'),
        ],
    )
    extended = AgentCard()
    extended.CopyFrom(card)
    extended.skills.append(AgentSkill(id='extended', name='extended', description='Only in the extended card', tags=['x']))
    handler = DefaultRequestHandler(
        agent_executor=InteropExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
        extended_agent_card=extended,
    )
    return Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, rpc_url='/a2a/jsonrpc'),
            *create_rest_routes(handler, path_prefix='/a2a/rest'),
        ]
    )


if __name__ == '__main__':
    port = int(sys.argv[1])
    uvicorn.run(build_app(port), host=HOST, port=port, log_level='warning')
