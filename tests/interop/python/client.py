"""The official Python client (a2a-sdk 1.3.0) against an a2a-kit server, for
tests/interop_python_client.rs.

Usage: python client.py BASE_URL

Runs card / send / stream / get / list / cancel / subscribe (and push configs) over JSON-RPC
and HTTP+JSON against the a2a-kit TestAgent (skills are picked with message metadata
`skillId`). Every HTTP response the SDK receives is also parsed strictly (strict_wire.py), with
`google.protobuf.json_format.Parse(..., ignore_unknown_fields=False)`, into the SDK's own
protobuf types (SSE events one by one, JSON-RPC results unwrapped from their envelope, error
details as google.rpc.ErrorInfo), so any deviation from the wire format is reported.

On top of strict parsing, members that strict ProtoJSON parsing still accepts but a
canonical writer never emits (snake_case names, nulls, numeric enums, non-UTC timestamps)
are reported too.

Prints one JSON object on the last line of stdout:
  {"bindings": {"JSONRPC": {...results...}, "HTTP+JSON": {...}},
   "strict": {"parsed": {"Task": 3, ...}, "violations": [{"where": ..., "error": ...}]}}
"""

import asyncio
import json
import sys
import traceback
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)

sys.dont_write_bytecode = True  # no __pycache__ next to strict_wire.py
from strict_wire import Strict, StrictTransport  # noqa: E402  (this directory)

CHECK = Strict()


# ---------------------------------------------------------------------------------------------
# The scenario


def msg(text, skill=None, task_id=None):
    m = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)])
    if skill:
        m.metadata.update({'skillId': skill})
    if task_id:
        m.task_id = task_id
    return m


def artifact_text(task):
    return ''.join(p.text for a in task.artifacts for p in a.parts)


async def collect(aiter):
    return [ev async for ev in aiter]


async def run_binding(base, binding):
    out = {}
    hx = httpx.AsyncClient(transport=StrictTransport(CHECK), timeout=60)
    try:
        card = await A2ACardResolver(hx, base).get_agent_card()
        out['card'] = {
            'name': card.name,
            'interfaces': [[i.protocol_binding, i.protocol_version] for i in card.supported_interfaces],
            'streaming': card.capabilities.streaming,
        }

        def make(streaming):
            cfg = ClientConfig(httpx_client=hx, supported_protocol_bindings=[binding], streaming=streaming)
            return ClientFactory(cfg).create(card)

        blocking, streaming = make(False), make(True)
        out['transport'] = type(blocking._transport).__name__

        async def step(name, coro):
            try:
                out[name] = await coro
            except Exception as e:  # recorded, the Rust test asserts on it
                out[name] = {'exception': type(e).__name__, 'message': str(e)[:300]}
                traceback.print_exc(file=sys.stderr)

        async def send_blocking():
            evs = await collect(blocking.send_message(SendMessageRequest(message=msg('hi from python', 'echo'))))
            t = evs[0].task
            return {'events': len(evs), 'state': TaskState.Name(t.status.state), 'text': artifact_text(t), 'id': t.id}

        async def send_direct():
            evs = await collect(blocking.send_message(SendMessageRequest(message=msg('yo', 'direct'))))
            return {'payload': evs[0].WhichOneof('payload'), 'text': ''.join(p.text for p in evs[0].message.parts)}

        async def stream():
            evs = await collect(streaming.send_message(SendMessageRequest(message=msg('3', 'chunks'))))
            kinds = [e.WhichOneof('payload') for e in evs]
            chunks = [
                [''.join(p.text for p in e.artifact_update.artifact.parts), e.artifact_update.append, e.artifact_update.last_chunk]
                for e in evs
                if e.WhichOneof('payload') == 'artifact_update'
            ]
            last = evs[-1]
            final = TaskState.Name(last.status_update.status.state if last.WhichOneof('payload') == 'status_update' else last.task.status.state)
            return {'kinds': kinds, 'chunks': chunks, 'final': final}

        async def return_immediately_get_subscribe():
            req = SendMessageRequest(message=msg('600', 'slow'), configuration=SendMessageConfiguration(return_immediately=True))
            evs = await collect(blocking.send_message(req))
            t = evs[0].task
            got = await blocking.get_task(GetTaskRequest(id=t.id, history_length=1))
            sub = await collect(streaming.subscribe(SubscribeToTaskRequest(id=t.id)))
            kinds = [e.WhichOneof('payload') for e in sub]
            last = sub[-1]
            final = TaskState.Name(last.status_update.status.state) if last.WhichOneof('payload') == 'status_update' else TaskState.Name(last.task.status.state)
            done = await blocking.get_task(GetTaskRequest(id=t.id))
            return {
                'initial': TaskState.Name(t.status.state),
                'get': TaskState.Name(got.status.state),
                'history': len(got.history),
                'subscribe_kinds': kinds,
                'subscribe_final': final,
                'done': TaskState.Name(done.status.state),
                'text': artifact_text(done),
            }

        async def list_tasks():
            lt = await blocking.list_tasks(ListTasksRequest(page_size=2))
            page2 = await blocking.list_tasks(ListTasksRequest(page_size=2, page_token=lt.next_page_token))
            working = await blocking.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_COMPLETED, include_artifacts=True))
            return {
                'count': len(lt.tasks),
                'total': lt.total_size,
                'page_size': lt.page_size,
                'has_next': bool(lt.next_page_token),
                'page2_count': len(page2.tasks),
                'page2_distinct': not ({t.id for t in lt.tasks} & {t.id for t in page2.tasks}),
                'completed_all_completed': all(t.status.state == TaskState.TASK_STATE_COMPLETED for t in working.tasks),
                'completed_have_artifacts': all(len(t.artifacts) > 0 for t in working.tasks),
            }

        async def cancel():
            req = SendMessageRequest(message=msg('20000', 'slow'), configuration=SendMessageConfiguration(return_immediately=True))
            t = (await collect(blocking.send_message(req)))[0].task
            c = await blocking.cancel_task(CancelTaskRequest(id=t.id))
            again = None
            try:
                await blocking.cancel_task(CancelTaskRequest(id=t.id))
            except Exception as e:
                again = type(e).__name__
            return {'state': TaskState.Name(c.status.state), 'again': again}

        async def not_found():
            try:
                await blocking.get_task(GetTaskRequest(id='no-such-task'))
                return {'exception': None}
            except Exception as e:
                return {'exception': type(e).__name__, 'message': str(e)[:200]}

        async def ask():
            t = (await collect(blocking.send_message(SendMessageRequest(message=msg('hi', 'ask')))))[0].task
            first = TaskState.Name(t.status.state)
            t2 = (await collect(blocking.send_message(SendMessageRequest(message=msg('Grace', task_id=t.id)))))[0].task
            return {'first': first, 'final': TaskState.Name(t2.status.state), 'text': artifact_text(t2)}

        async def push():
            req = SendMessageRequest(message=msg('20000', 'slow'), configuration=SendMessageConfiguration(return_immediately=True))
            t = (await collect(blocking.send_message(req)))[0].task
            created = await blocking.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=t.id, id='cfg1', url='https://example.com/webhook', token='tok')
            )
            got = await blocking.get_task_push_notification_config(GetTaskPushNotificationConfigRequest(task_id=t.id, id='cfg1'))
            listed = await blocking.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=t.id))
            await blocking.delete_task_push_notification_config(DeleteTaskPushNotificationConfigRequest(task_id=t.id, id='cfg1'))
            after = await blocking.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=t.id))
            await blocking.cancel_task(CancelTaskRequest(id=t.id))
            return {'created': created.id, 'got': got.url, 'listed': len(listed.configs), 'after_delete': len(after.configs)}

        await step('send', send_blocking())
        await step('direct', send_direct())
        await step('stream', stream())
        await step('get_subscribe', return_immediately_get_subscribe())
        await step('list', list_tasks())
        await step('cancel', cancel())
        await step('not_found', not_found())
        await step('ask', ask())
        await step('push', push())
    finally:
        await hx.aclose()
    return out


async def main():
    base = sys.argv[1]
    results = {}
    for binding in ['JSONRPC', 'HTTP+JSON']:
        try:
            results[binding] = await run_binding(base, binding)
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            results[binding] = {'fatal': f'{type(e).__name__}: {e}'}
    summary = {'bindings': results, 'strict': {'parsed': dict(CHECK.parsed), 'violations': CHECK.violations}}
    print(json.dumps(summary))


if __name__ == '__main__':
    asyncio.run(main())
