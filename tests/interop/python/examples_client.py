"""The official Python client (a2a-sdk 1.x) calls every skill of every example agent over
JSON-RPC or gRPC, for tests/interop_examples.rs: data skills with a data part built from a
dict, a streaming skill through the streaming API, and skills that ask a question answered on
the same task.

Usage: examples_client.py AGENTS_JSON CALLS_JSON [jsonrpc|grpc]   (default jsonrpc)
  AGENTS_JSON: {"hello": BASE_URL, "travel": BASE_URL, ...}
  CALLS_JSON: [{"agent", "skill", "text"?, "data"?, "reply"?, "stream"?, "message_id"?}, ...]

Each call sends one message (a text part, or a data part) with metadata `skillId`; with
`reply`, a task that asks (INPUT_REQUIRED) gets that text as its answer. Every response is
also parsed strictly into the SDK's protobuf types (strict_wire.py); over gRPC (the SDK's
`GrpcTransport`, from the card's `GRPC` interface) the cards are still read over HTTP and
parsed so, and the gRPC messages and error statuses are checked as strict_wire.py says.

Prints one JSON object on the last line of stdout:
  {"binding", "transports": {agent: the SDK's transport class},
   "calls": [{"agent", "skill", "kind": "task"|"message", "state", "text", "data", "status",
              "asked", "asked_state", "chunks", "events", "error"?}, ...],
   "strict": {"parsed": {...}, "violations": [...]}}
"""

import asyncio
import json
import sys
import traceback
import uuid

import grpc
import httpx
from google.protobuf import json_format, struct_pb2

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

sys.dont_write_bytecode = True  # no __pycache__ next to strict_wire.py
from strict_wire import Strict, StrictTransport, grpc_interceptors  # noqa: E402  (this directory)

CHECK = Strict()
BINDINGS = {'jsonrpc': 'JSONRPC', 'grpc': 'GRPC'}


def message(call, text=None, task=None):
    """The call's message: its text or data part, routed with `skillId`; or, with `text`, the
    reply to `task`'s question."""
    if text is not None:
        part = Part(text=text)
    elif 'data' in call:
        part = Part(data=json_format.ParseDict(call['data'], struct_pb2.Value()))
    else:
        part = Part(text=call['text'])
    message_id = call.get('message_id', 'py') + '-' + str(uuid.uuid4())
    m = Message(role=Role.ROLE_USER, message_id=message_id, parts=[part])
    if task is not None:
        m.task_id = task.id
        m.context_id = task.context_id
    else:
        m.metadata.update({'skillId': call['skill']})
    return m


def parts_text(parts):
    return ''.join(p.text for p in parts if p.HasField('text'))


def parts_data(parts):
    return [json_format.MessageToDict(p.data) for p in parts if p.HasField('data')]


def outcome(events):
    """What the events amount to: a direct message, or the task's final state with its
    artifacts (streamed chunks put together) and status message."""
    last = events[-1]
    kind = last.WhichOneof('payload')
    if kind == 'message':
        return {
            'kind': 'message',
            'text': parts_text(last.message.parts),
            'data': parts_data(last.message.parts),
            'events': len(events),
        }
    task, state, status, chunks = None, None, '', 0
    artifacts = {}  # artifact id -> its parts, in order of first appearance
    for ev in events:
        which = ev.WhichOneof('payload')
        if which == 'task':
            task = ev.task
            artifacts = {a.artifact_id: list(a.parts) for a in ev.task.artifacts}
            state = ev.task.status.state
            status = parts_text(ev.task.status.message.parts)
        elif which == 'artifact_update':
            chunks += 1
            a = ev.artifact_update.artifact
            if ev.artifact_update.append:
                artifacts.setdefault(a.artifact_id, []).extend(a.parts)
            else:
                artifacts[a.artifact_id] = list(a.parts)
        elif which == 'status_update':
            state = ev.status_update.status.state
            text = parts_text(ev.status_update.status.message.parts)
            if text:
                status = text
    parts = [p for ps in artifacts.values() for p in ps]
    return {
        'kind': 'task',
        'task': task,
        'state': TaskState.Name(state) if state is not None else None,
        'text': parts_text(parts),
        'data': parts_data(parts),
        'status': status,
        'chunks': chunks,
        'events': len(events),
    }


async def send(client, m):
    return [ev async for ev in client.send_message(SendMessageRequest(message=m))]


async def call_skill(clients, call):
    blocking, streaming = clients
    client = streaming if call.get('stream') else blocking
    got = outcome(await send(client, message(call)))
    if call.get('reply') is not None and got['kind'] == 'task' and got['state'] == 'TASK_STATE_INPUT_REQUIRED':
        asked, asked_state = got['status'], got['state']
        task = got['task']
        if task is None:
            raise RuntimeError('an INPUT_REQUIRED answer without its task')
        got = outcome(await send(client, message(call, text=call['reply'], task=task)))
        got['asked'], got['asked_state'] = asked, asked_state
    got.pop('task', None)
    return got


async def main(agents, calls, binding):
    out = []
    channels = []

    def channel(url):
        # The SDK's grpc_channel_factory: plaintext (h2c) to the interface's host:port.
        ch = grpc.aio.insecure_channel(url, interceptors=grpc_interceptors(CHECK))
        channels.append(ch)
        return ch

    async with httpx.AsyncClient(transport=StrictTransport(CHECK), timeout=60) as hx:
        clients = {}
        transports = {}
        for name, base in agents.items():
            card = await A2ACardResolver(hx, base).get_agent_card()

            def make(streaming, card=card):
                cfg = ClientConfig(
                    httpx_client=hx,
                    grpc_channel_factory=channel,
                    supported_protocol_bindings=[BINDINGS[binding]],
                    streaming=streaming,
                )
                return ClientFactory(cfg).create(card)

            clients[name] = (make(False), make(True))
            transports[name] = type(clients[name][0]._transport).__name__
        for call in calls:
            result = {'agent': call['agent'], 'skill': call['skill']}
            try:
                result.update(await call_skill(clients[call['agent']], call))
            except Exception as e:  # recorded: the Rust test fails on it, with the reason
                traceback.print_exc(file=sys.stderr)
                result['error'] = f'{type(e).__name__}: {str(e)[:400]}'
            out.append(result)
    for ch in channels:
        await ch.close()
    print(json.dumps({
        'binding': binding,
        'transports': transports,
        'calls': out,
        'strict': {'parsed': dict(CHECK.parsed), 'violations': CHECK.violations},
    }))


if __name__ == '__main__':
    binding = sys.argv[3] if len(sys.argv) > 3 else 'jsonrpc'
    if binding not in BINDINGS:
        sys.exit(f'binding must be one of {sorted(BINDINGS)}')
    asyncio.run(main(json.loads(sys.argv[1]), json.loads(sys.argv[2]), binding))
