"""The official Python client (a2a-sdk 1.3.0, pinned) against the a2a-kit conformance agent,
for tests/interop_conformance.rs.

Usage: python py_client.py BASE_URL (jsonrpc|rest|grpc) WEBHOOK_URL [--no-streaming]

BASE_URL serves the conformance agent (examples/src/conformance.rs: behaviour keyed on the
messageId prefix). The main run expects it started with `--push --extended-card`; with
`--no-streaming` it expects the agent started with `--no-streaming` only, and checks the
"not supported" errors. WEBHOOK_URL is a receiver the Rust test runs: `POST {WEBHOOK_URL}/hook/KEY`
is recorded, `GET {WEBHOOK_URL}/received/KEY` lists the records as
`[{"token": X-A2A-Notification-Token, "contentType": ..., "body": raw body}]`.

`grpc` is the SDK's own gRPC transport (`GrpcTransport`, picked by the SDK from the card's
`GRPC` interface, `host:port`, through `ClientConfig.grpc_channel_factory`), on the agent's
listener (h2c). The card itself is fetched over HTTP whatever the binding (A2A has no gRPC
method for the public card), and the push deliveries are HTTP POSTs from the agent to the
webhook whatever binding registered them.

Every HTTP response the SDK receives (bodies, each SSE event, JSON-RPC results unwrapped from
their envelope, error details as google.rpc.ErrorInfo) and every pushed body is parsed strictly,
with `google.protobuf.json_format.Parse(..., ignore_unknown_fields=False)`, into the SDK's own
protobuf types (tests/interop/python/strict_wire.py); over gRPC, where the messages are
protobuf already, every response message is checked for fields and enum values the SDK's
schema does not know, and every error status for its `google.rpc.Status` details (see
strict_wire.py). A violation fails the `strict_wire` check and names the check that caused it.

Prints ONE JSON line on stdout:
  {"client": "py", "binding": ..., "mode": "main"|"no-streaming",
   "checks": [{"check": name, "ok": bool, "detail": ...}, ...]}
"""

import asyncio
import json
import sys
import time
import traceback
import uuid
from pathlib import Path

import grpc
import httpx
from google.protobuf.json_format import MessageToDict, Parse

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)

sys.dont_write_bytecode = True  # no __pycache__ next to strict_wire.py
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'python'))
from strict_wire import Strict, StrictTransport, grpc_interceptors  # noqa: E402  (tests/interop/python)

BINDINGS = {'jsonrpc': 'JSONRPC', 'rest': 'HTTP+JSON', 'grpc': 'GRPC'}
TRANSPORTS = {'jsonrpc': 'JsonRpcTransport', 'rest': 'RestTransport', 'grpc': 'GrpcTransport'}

# Strict checking of everything on the wire (strict_wire.py), each violation naming its check.
STRICT = Strict(conformance=True)


# ---------------------------------------------------------------------------------------------
# Helpers


class CheckFailed(Exception):
    pass


def expect(cond, what, **ctx):
    if not cond:
        raise CheckFailed(json.dumps({'expected': what, **ctx}, default=str))


def state(s):
    return TaskState.Name(s)


def msg(prefix, text='hi', context_id=None, task_id=None):
    m = Message(role=Role.ROLE_USER, message_id=f'{prefix}-{uuid.uuid4()}', parts=[Part(text=text)])
    if context_id:
        m.context_id = context_id
    if task_id:
        m.task_id = task_id
    return m


def texts(parts):
    return ''.join(p.text for p in parts)


async def collect(aiter):
    return [ev async for ev in aiter]


def kinds(evs):
    return [e.WhichOneof('payload') for e in evs]


def final_state(ev):
    k = ev.WhichOneof('payload')
    if k == 'status_update':
        return state(ev.status_update.status.state)
    if k == 'task':
        return state(ev.task.status.state)
    return k


async def error_name(coro):
    """The exception a call raises (its class name), or None."""
    STRICT.last_body = ''
    try:
        await coro
    except Exception as e:  # the SDK's typed errors
        return type(e).__name__, str(e)[:300]
    return None, None


async def stream_error_name(aiter):
    STRICT.last_body = ''
    try:
        await collect(aiter)
    except Exception as e:
        return type(e).__name__, str(e)[:300]
    return None, None


def expect_error(got, want, reason):
    """`got` (name, message) is the SDK's `want` exception, raised for the server's answer
    carrying ErrorInfo `reason` (not by the SDK on its own)."""
    name, message = got
    expect(name == want, want, got=name, message=message, response=STRICT.last_body[:600])
    expect(f'"{reason}"' in STRICT.last_body, f'the server answered with reason {reason}', response=STRICT.last_body[:600])
    return {'exception': name}


# ---------------------------------------------------------------------------------------------
# The scenario


class Run:
    def __init__(self, base, binding, webhook, no_streaming):
        self.base, self.binding, self.webhook, self.no_streaming = base, binding, webhook, no_streaming
        self.checks = []
        self.hx = httpx.AsyncClient(transport=StrictTransport(STRICT), timeout=60)
        self.channels = []  # the gRPC channels the SDK asked for, closed at the end

    async def check(self, name, fn):
        STRICT.current = name
        start = time.monotonic()
        try:
            detail = await fn()
            self.checks.append({'check': name, 'ok': True, 'detail': detail})
        except CheckFailed as e:
            self.checks.append({'check': name, 'ok': False, 'detail': json.loads(str(e))})
        except Exception as e:  # an SDK exception is a failed check, with its trace
            self.checks.append({
                'check': name,
                'ok': False,
                'detail': {'exception': type(e).__name__, 'message': str(e)[:500], 'trace': traceback.format_exc()[-1500:]},
            })
        self.checks[-1]['seconds'] = round(time.monotonic() - start, 2)

    def channel(self, url):
        """The SDK's `grpc_channel_factory`: a plaintext (h2c) channel to the interface's
        `host:port`, every response checked by strict_wire's interceptors."""
        ch = grpc.aio.insecure_channel(url, interceptors=grpc_interceptors(STRICT))
        self.channels.append(ch)
        return ch

    def client(self, card, streaming):
        cfg = ClientConfig(
            httpx_client=self.hx,
            grpc_channel_factory=self.channel,
            supported_protocol_bindings=[BINDINGS[self.binding]],
            streaming=streaming,
        )
        return ClientFactory(cfg).create(card)

    async def close(self):
        await self.hx.aclose()
        for ch in self.channels:
            await ch.close()

    async def send(self, client, m, **config):
        req = SendMessageRequest(message=m)
        if config:
            req.configuration.CopyFrom(SendMessageConfiguration(**config))
        evs = await collect(client.send_message(req))
        expect(len(evs) == 1, 'one response from a blocking send', got=kinds(evs))
        return evs[0]

    async def send_task(self, client, m, **config):
        ev = await self.send(client, m, **config)
        expect(ev.WhichOneof('payload') == 'task', 'a Task', got=ev.WhichOneof('payload'))
        return ev.task

    async def run(self):
        card_holder = {}

        async def card():
            c = await A2ACardResolver(self.hx, self.base).get_agent_card()
            card_holder['card'] = c
            bindings = [i.protocol_binding for i in c.supported_interfaces]
            caps = c.capabilities
            detail = {
                'name': c.name,
                'interfaces': [[i.protocol_binding, i.protocol_version, i.url] for i in c.supported_interfaces],
                'capabilities': MessageToDict(caps),
            }
            expect(BINDINGS[self.binding] in bindings, f'an interface for {BINDINGS[self.binding]}', **detail)
            expect(all(i.protocol_version == '1.0' for i in c.supported_interfaces), 'protocolVersion 1.0', **detail)
            if self.no_streaming:
                expect(not caps.streaming and not caps.push_notifications and not caps.extended_agent_card, 'capabilities off', **detail)
            else:
                expect(caps.streaming and caps.push_notifications and caps.extended_agent_card, 'capabilities on', **detail)
            transport = type(self.client(c, False)._transport).__name__
            want = TRANSPORTS[self.binding]
            expect(transport == want, f'the SDK picks {want}', got=transport)
            detail['transport'] = transport
            if self.binding == 'grpc':
                # The card is read over HTTP (no gRPC method serves the public card); the
                # GRPC interface names the same listener as host:port, without a scheme.
                detail['card_fetch'] = 'HTTP GET /.well-known/agent-card.json (the public card has no gRPC method)'
                authority = self.base.split('://', 1)[-1].rstrip('/')
                urls = [i.url for i in c.supported_interfaces if i.protocol_binding == 'GRPC']
                expect(urls == [authority], f'one GRPC interface at {authority}', got=urls)
            return detail

        await self.check('card', card)
        if 'card' not in card_holder:
            return
        real = card_holder['card']
        blocking, streaming = self.client(real, False), self.client(real, True)
        # A client that ignores the card's capabilities, to reach the server's "not supported" errors.
        forced_card = AgentCard()
        forced_card.CopyFrom(real)
        forced_card.capabilities.streaming = True
        forced_card.capabilities.push_notifications = True
        forced_card.capabilities.extended_agent_card = True
        forced = self.client(forced_card, True)
        shared = {}

        async def send_blocking():
            t = await self.send_task(blocking, msg('tck-complete-task'))
            shared['completed'] = t
            expect(state(t.status.state) == 'TASK_STATE_COMPLETED', 'COMPLETED', got=state(t.status.state))
            expect(texts(t.status.message.parts) == 'Hello from TCK', 'status message "Hello from TCK"', got=texts(t.status.message.parts))
            expect(t.id and t.context_id, 'task and context ids')
            return {'id': t.id, 'state': state(t.status.state)}

        await self.check('send_blocking', send_blocking)

        if self.no_streaming:
            await self.no_streaming_checks(streaming, forced)
        else:
            await self.main_checks(blocking, streaming, shared)
        STRICT.current = None

    async def main_checks(self, blocking, streaming, shared):
        async def send_parts():
            out = {}
            t = await self.send_task(blocking, msg('tck-artifact-text'))
            out['text'] = texts(t.artifacts[0].parts)
            expect(out['text'] == 'Generated text content', 'text artifact', got=out)
            p = (await self.send_task(blocking, msg('tck-artifact-file'))).artifacts[0].parts[0]
            out['file'] = [p.WhichOneof('content'), p.raw.decode(errors='replace'), p.filename, p.media_type]
            expect(out['file'] == ['raw', 'Generated file content', 'output.txt', 'text/plain'], 'raw file part', got=out)
            p = (await self.send_task(blocking, msg('tck-artifact-file-url'))).artifacts[0].parts[0]
            out['url'] = [p.WhichOneof('content'), p.url, p.filename, p.media_type]
            expect(out['url'] == ['url', 'https://example.com/output.txt', 'output.txt', 'text/plain'], 'url part', got=out)
            p = (await self.send_task(blocking, msg('tck-artifact-data'))).artifacts[0].parts[0]
            out['data'] = [p.WhichOneof('content'), MessageToDict(p.data)]
            expect(out['data'] == ['data', {'key': 'value', 'count': 42}], 'data part', got=out)
            t = await self.send_task(blocking, msg('tck-reject-task'))
            out['reject'] = state(t.status.state)
            expect(out['reject'] == 'TASK_STATE_REJECTED', 'REJECTED', got=out)
            return out

        async def send_direct_message():
            ev = await self.send(blocking, msg('tck-message-response'))
            got = [ev.WhichOneof('payload'), texts(ev.message.parts), Role.Name(ev.message.role)]
            expect(got == ['message', 'Direct message response', 'ROLE_AGENT'], 'a direct agent Message', got=got)
            return got

        async def stream():
            evs = await collect(streaming.send_message(SendMessageRequest(message=msg('tck-stream-001'))))
            ks = kinds(evs)
            expect(ks == ['task', 'status_update', 'artifact_update', 'status_update'], 'task, WORKING, artifact, COMPLETED', got=ks)
            states = [final_state(evs[1]), final_state(evs[3])]
            expect(states == ['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'], 'WORKING then COMPLETED', got=states)
            text = texts(evs[2].artifact_update.artifact.parts)
            expect(text == 'Generated text content', 'the artifact text', got=text)
            ids = {evs[0].task.id, evs[1].status_update.task_id, evs[2].artifact_update.task_id, evs[3].status_update.task_id}
            expect(len(ids) == 1, 'one task id throughout', got=sorted(ids))
            return {'kinds': ks, 'states': states}

        async def stream_chunked():
            evs = await collect(streaming.send_message(SendMessageRequest(message=msg('tck-stream-artifact-chunked'))))
            chunks = [
                [texts(e.artifact_update.artifact.parts), e.artifact_update.append, e.artifact_update.last_chunk]
                for e in evs
                if e.WhichOneof('payload') == 'artifact_update'
            ]
            expect(chunks == [['chunk-1 ', False, False], ['chunk-2', True, True]], 'two chunks, append + lastChunk', got=chunks)
            expect(final_state(evs[-1]) == 'TASK_STATE_COMPLETED', 'COMPLETED', got=final_state(evs[-1]))
            return {'chunks': chunks}

        async def stream_direct_message():
            evs = await collect(streaming.send_message(SendMessageRequest(message=msg('tck-message-response'))))
            expect(kinds(evs) == ['message'], 'one message event', got=kinds(evs))
            return {'kinds': kinds(evs)}

        async def get():
            done = shared.get('completed')
            expect(done is not None, 'send_blocking to have made a task')
            t = await blocking.get_task(GetTaskRequest(id=done.id, history_length=1))
            got = {'id': t.id == done.id, 'state': state(t.status.state), 'history': len(t.history)}
            expect(got == {'id': True, 'state': 'TASK_STATE_COMPLETED', 'history': 1}, 'the task, one history message', got=got)
            full = await blocking.get_task(GetTaskRequest(id=done.id))
            expect(len(full.history) >= 1 and full.history[0].role == Role.ROLE_USER, 'the full history starting with the user message')
            return got

        async def get_missing():
            got = await error_name(blocking.get_task(GetTaskRequest(id=f'no-such-task-{uuid.uuid4()}')))
            return expect_error(got, 'TaskNotFoundError', 'TASK_NOT_FOUND')

        ctx = f'ctx-py-{self.binding}-{uuid.uuid4()}'

        async def list_pages():
            for i in range(3):
                await self.send_task(blocking, msg('echo', f'n{i}', context_id=ctx))
            await self.send_task(blocking, msg('tck-reject-task', context_id=ctx))
            p1 = await blocking.list_tasks(ListTasksRequest(context_id=ctx, page_size=2))
            p2 = await blocking.list_tasks(ListTasksRequest(context_id=ctx, page_size=2, page_token=p1.next_page_token))
            got = {
                'p1': len(p1.tasks), 'p2': len(p2.tasks), 'total': p1.total_size, 'page_size': p1.page_size,
                'p1_next': bool(p1.next_page_token), 'p2_next': p2.next_page_token,
                'distinct': not ({t.id for t in p1.tasks} & {t.id for t in p2.tasks}),
                'same_context': all(t.context_id == ctx for t in [*p1.tasks, *p2.tasks]),
            }
            want = {'p1': 2, 'p2': 2, 'total': 4, 'page_size': 2, 'p1_next': True, 'p2_next': '', 'distinct': True, 'same_context': True}
            expect(got == want, want, got=got)
            return got

        async def list_filters():
            rej = await blocking.list_tasks(ListTasksRequest(context_id=ctx, status=TaskState.TASK_STATE_REJECTED))
            done = await blocking.list_tasks(ListTasksRequest(context_id=ctx, status=TaskState.TASK_STATE_COMPLETED, include_artifacts=True))
            bare = await blocking.list_tasks(ListTasksRequest(context_id=ctx, status=TaskState.TASK_STATE_COMPLETED, history_length=0))
            got = {
                'rejected': [state(t.status.state) for t in rej.tasks],
                'completed': len(done.tasks),
                'with_artifacts': all(len(t.artifacts) > 0 for t in done.tasks),
                'texts': sorted(texts(t.artifacts[0].parts) for t in done.tasks if t.artifacts),
                'artifacts_omitted': all(len(t.artifacts) == 0 for t in bare.tasks),
                'history_0': all(len(t.history) == 0 for t in bare.tasks),
            }
            want = {
                'rejected': ['TASK_STATE_REJECTED'], 'completed': 3, 'with_artifacts': True, 'texts': ['n0', 'n1', 'n2'],
                'artifacts_omitted': True, 'history_0': True,
            }
            expect(got == want, want, got=got)
            return got

        cancel = {}

        async def cancel_input_required():
            t = await self.send_task(blocking, msg('tck-input-required'))
            expect(state(t.status.state) == 'TASK_STATE_INPUT_REQUIRED', 'INPUT_REQUIRED', got=state(t.status.state))
            c = await blocking.cancel_task(CancelTaskRequest(id=t.id))
            cancel['id'] = t.id
            g = await blocking.get_task(GetTaskRequest(id=t.id))
            got = [state(c.status.state), state(g.status.state)]
            expect(got == ['TASK_STATE_CANCELED'] * 2, 'CANCELED (answer and GetTask)', got=got)
            return {'states': got}

        async def cancel_terminal():
            expect('id' in cancel, 'cancel_input_required to have canceled a task')
            got = await error_name(blocking.cancel_task(CancelTaskRequest(id=cancel['id'])))
            return expect_error(got, 'TaskNotCancelableError', 'TASK_NOT_CANCELABLE')

        async def subscribe_running():
            t = await self.send_task(blocking, msg('test-resubscribe-message-id'), return_immediately=True)
            first = state(t.status.state)
            expect(first in ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'), 'a running task', got=first)
            evs = await collect(streaming.subscribe(SubscribeToTaskRequest(id=t.id)))
            ks = kinds(evs)
            expect(ks and ks[0] == 'task', 'a task snapshot first', got=ks)
            expect(final_state(evs[-1]) == 'TASK_STATE_COMPLETED', 'the stream ends COMPLETED', got=ks, last=final_state(evs[-1]))
            return {'initial': first, 'kinds': ks}

        push = {}

        async def push_config_crud():
            t = await self.send_task(blocking, msg('test-resubscribe-message-id'), return_immediately=True)
            key = f'py-{self.binding}-{uuid.uuid4().hex[:8]}'
            token = uuid.uuid4().hex
            push.update(task=t.id, key=key, token=token)
            url = f'{self.webhook}/hook/{key}'
            created = await blocking.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=t.id, id='cfg-py', url=url, token=token)
            )
            expect([created.task_id, created.id, created.url, created.token] == [t.id, 'cfg-py', url, token], 'the created config echoed', got=MessageToDict(created))
            got = await blocking.get_task_push_notification_config(GetTaskPushNotificationConfigRequest(task_id=t.id, id='cfg-py'))
            expect([got.id, got.url] == ['cfg-py', url], 'GetTaskPushNotificationConfig', got=MessageToDict(got))
            listed = await blocking.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=t.id))
            expect([c.id for c in listed.configs] == ['cfg-py'], 'one listed config', got=MessageToDict(listed))
            push['delivery'] = await self.wait_delivery(key, t.id, token)
            await blocking.delete_task_push_notification_config(DeleteTaskPushNotificationConfigRequest(task_id=t.id, id='cfg-py'))
            after = await blocking.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=t.id))
            expect(len(after.configs) == 0, 'no config after delete', got=MessageToDict(after))
            gone = await error_name(blocking.get_task_push_notification_config(GetTaskPushNotificationConfigRequest(task_id=t.id, id='cfg-py')))
            expect_error(gone, 'TaskNotFoundError', 'TASK_NOT_FOUND')  # of the deleted config
            return {'created': created.id, 'listed': 1, 'after_delete': 0}

        async def push_delivery():
            d = push.get('delivery')
            expect(d is not None, 'push_config_crud to have waited for a delivery')
            expect(d.get('ok'), 'a COMPLETED StreamResponse POSTed to the webhook with the token', got=d)
            if self.binding == 'grpc':
                # Registered over gRPC; the delivery itself is HTTP whatever the binding.
                d['delivered_over'] = 'HTTP POST to the webhook (the push protocol is HTTP whatever the binding)'
            return d

        async def extended_card():
            c = await blocking.get_extended_agent_card(GetExtendedAgentCardRequest())
            expect('(extended)' in c.name, 'the extended card', got=c.name)
            return {'name': c.name}

        await self.check('send_parts', send_parts)
        await self.check('send_direct_message', send_direct_message)
        await self.check('stream', stream)
        await self.check('stream_chunked', stream_chunked)
        await self.check('stream_direct_message', stream_direct_message)
        await self.check('get', get)
        await self.check('get_missing', get_missing)
        await self.check('list_pages', list_pages)
        await self.check('list_filters', list_filters)
        await self.check('cancel_input_required', cancel_input_required)
        await self.check('cancel_terminal', cancel_terminal)
        await self.check('subscribe_running', subscribe_running)
        await self.check('push_config_crud', push_config_crud)
        await self.check('push_delivery', push_delivery)
        await self.check('extended_card', extended_card)

    async def wait_delivery(self, key, task_id, token):
        """Poll the receiver until a COMPLETED event for the task arrived (10 s). Every pushed
        body is parsed strictly as a StreamResponse."""
        seen = 0
        records = []
        deadline = time.monotonic() + 10
        async with httpx.AsyncClient(timeout=10) as plain:
            while time.monotonic() < deadline:
                records = (await plain.get(f'{self.webhook}/received/{key}')).json()
                for r in records[seen:]:
                    try:
                        body = json.loads(r['body'])
                    except ValueError as e:
                        STRICT.fail(f'push to {key}', f'body is not JSON: {e}')
                        continue
                    STRICT.parse(f'push to {key}', body, StreamResponse)
                    STRICT.parsed['pushed StreamResponse'] += 1
                seen = len(records)
                for r in records:
                    try:
                        ev = Parse(r['body'], StreamResponse(), ignore_unknown_fields=True)
                    except Exception:
                        continue
                    k = ev.WhichOneof('payload')
                    tid = ev.status_update.task_id if k == 'status_update' else ev.task.id if k == 'task' else None
                    if tid == task_id and final_state(ev) == 'TASK_STATE_COMPLETED':
                        ok = r.get('token') == token
                        return {
                            'ok': ok, 'payload': k, 'deliveries': len(records), 'content_type': r.get('contentType'),
                            'token_header': 'matches' if ok else r.get('token'),
                        }
                await asyncio.sleep(0.1)
        return {'ok': False, 'error': 'no COMPLETED delivery within 10 s', 'records': records}

    async def no_streaming_checks(self, streaming, forced):
        async def stream_falls_back():
            # The SDK itself sends a unary SendMessage when the card says streaming is off.
            evs = await collect(streaming.send_message(SendMessageRequest(message=msg('tck-stream-001'))))
            got = [kinds(evs), final_state(evs[-1])]
            expect(got == [['task'], 'TASK_STATE_COMPLETED'], 'one completed task', got=got)
            return got

        async def stream_unsupported():
            got = await stream_error_name(forced.send_message(SendMessageRequest(message=msg('tck-stream-001'))))
            return expect_error(got, 'UnsupportedOperationError', 'UNSUPPORTED_OPERATION')

        async def subscribe_unsupported():
            t = await self.send_task(forced_blocking, msg('tck-input-required'))
            # An INPUT_REQUIRED task: subscribing to it works with streaming on, so the error is the capability's.
            got = await stream_error_name(forced.subscribe(SubscribeToTaskRequest(id=t.id)))
            return expect_error(got, 'UnsupportedOperationError', 'UNSUPPORTED_OPERATION')

        async def push_unsupported():
            t = await self.send_task(forced_blocking, msg('tck-input-required'))
            got = await error_name(forced.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=t.id, id='cfg', url=f'{self.webhook}/hook/never', token='t')
            ))
            out = expect_error(got, 'PushNotificationNotSupportedError', 'PUSH_NOTIFICATION_NOT_SUPPORTED')
            got = await error_name(forced.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=t.id)))
            expect_error(got, 'PushNotificationNotSupportedError', 'PUSH_NOTIFICATION_NOT_SUPPORTED')
            return out

        async def extended_card_unsupported():
            got = await error_name(forced.get_extended_agent_card(GetExtendedAgentCardRequest()))
            return expect_error(got, 'UnsupportedOperationError', 'UNSUPPORTED_OPERATION')

        forced_card = forced._card
        forced_blocking = self.client(forced_card, False)
        await self.check('stream_falls_back', stream_falls_back)
        await self.check('stream_unsupported', stream_unsupported)
        await self.check('subscribe_unsupported', subscribe_unsupported)
        await self.check('push_unsupported', push_unsupported)
        await self.check('extended_card_unsupported', extended_card_unsupported)


async def main():
    base, binding, webhook = sys.argv[1], sys.argv[2], sys.argv[3].rstrip('/')
    no_streaming = '--no-streaming' in sys.argv[4:]
    if binding not in BINDINGS:
        sys.exit(f'binding must be one of {sorted(BINDINGS)}')
    run = Run(base, binding, webhook, no_streaming)
    try:
        await run.run()
    finally:
        await run.close()
    violations = STRICT.violations
    checked = {
        'grpc': 'every gRPC response message: no field or enum value unknown to the SDK\'s schema; every '
        'error status: a google.rpc.Status in grpc-status-details-bin matching the call, with an '
        'a2a-protocol.org ErrorInfo; the card (HTTP) and pushed bodies: strict ProtoJSON',
    }.get(binding, 'every HTTP body, SSE event and pushed body: strict ProtoJSON into the SDK\'s types')
    run.checks.append({
        'check': 'strict_wire',
        'ok': not violations and sum(STRICT.parsed.values()) > 0,
        'detail': {'checked': checked, 'parsed': dict(STRICT.parsed), 'violations': violations},
    })
    print(json.dumps({
        'client': 'py', 'binding': binding, 'mode': 'no-streaming' if no_streaming else 'main', 'checks': run.checks,
    }))


if __name__ == '__main__':
    asyncio.run(main())
