"""The official Python client of A2A v0.3 (a2a-sdk 0.3.26, pinned) against an agent that
speaks v0.3, for tests/interop_v03.rs.

Usage: python py_client.py BASE_URL (jsonrpc|rest) WEBHOOK_URL

BASE_URL serves the card at /.well-known/agent-card.json and behaves on the messageId prefix
as the a2a-kit conformance agent does (examples/src/conformance.rs; py_server.py mirrors it),
with push notifications and an extended card. `jsonrpc` is v0.3 JSON-RPC (`message/send`,
...); `rest` is v0.3 HTTP+JSON (`POST /v1/message:send`, ...), which this SDK speaks as the
ProtoJSON of its v0.3 protobuf types (`a2a.grpc.a2a_pb2`). WEBHOOK_URL is a receiver the Rust
test runs: `POST {WEBHOOK_URL}/hook/KEY` is recorded, `GET {WEBHOOK_URL}/received/KEY` lists
`[{"token": X-A2A-Notification-Token, "contentType", "body": raw body}]`.

Every call goes through the SDK's own client (`A2ACardResolver`, `ClientFactory`, the
`Client` it makes), except what 0.3.26's `Client` has no method for: the push config list and
delete (sent with the SDK's request types, over JSON-RPC, or as the v0.3 HTTP+JSON paths), and
the malformed requests of the bad-input checks (over JSON-RPC through the SDK, a
`ClientCallInterceptor` breaking the payload; over HTTP+JSON, which the SDK's interceptors do
not reach, posted directly).

Strict wire checking (the `strict_wire` check): every JSON-RPC response and SSE event is
validated with the SDK's pydantic envelope types (`SendMessageResponse`, `GetTaskResponse`,
..., `model_validate_json(strict=True)`), and must hold no member the type does not know, and
carry `kind` wherever the type has one; every HTTP+JSON body and event is parsed into the
SDK's protobuf types with `json_format.Parse` (unknown fields are errors); the card (and the
HTTP+JSON extended card, which the SDK reads as pydantic) must validate as the SDK's
`AgentCard`, members unknown to it allowed only where a v1.0 card has them (a hybrid card);
every pushed body must be a strict v0.3 `Task`.

Prints ONE JSON line on stdout: {"check name": "ok" | "failure description", ...}
"""

import asyncio
import base64
import collections
import copy
import json
import re
import sys
import time
import traceback
import uuid

import httpx
from google.protobuf import json_format
from pydantic import BaseModel, ValidationError

from a2a import types as t
from a2a.client import (
    A2ACardResolver,
    ClientCallContext,
    ClientCallInterceptor,
    ClientConfig,
    ClientFactory,
)
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.grpc import a2a_pb2
from a2a.utils import proto_utils

BINDINGS = {'jsonrpc': t.TransportProtocol.jsonrpc, 'rest': t.TransportProtocol.http_json}
TRANSPORTS = {'jsonrpc': 'JsonRpcTransport', 'rest': 'RestTransport'}

# What a hybrid (v1.0 + v0.3) card may hold beyond v0.3's AgentCard: v1.0's members.
CARD_V1_MEMBERS = {
    '$.supportedInterfaces',
    '$.securityRequirements',
    '$.capabilities.extendedAgentCard',
    '$.skills[].securityRequirements',
}

# Every check, in order (tests/interop_v03.rs lists the same; js_client.mjs runs the same).
CHECKS = [
    'card',
    'send_text',
    'send_parts',
    'send_artifact_text',
    'send_artifact_file_bytes',
    'send_artifact_file_uri',
    'send_artifact_data',
    'send_rejected',
    'send_direct_message',
    'input_required_reply',
    'stream',
    'stream_chunked',
    'stream_direct_message',
    'get',
    'get_missing',
    'cancel_input_required',
    'cancel_terminal',
    'resubscribe_running',
    'push_config_set',
    'push_config_get',
    'push_config_list',
    'push_delivery',
    'push_config_delete',
    'extended_card',
    'bad_input_missing_message_id',
    'bad_input_unknown_part_kind',
]

JSONRPC_RESULTS = {
    'message/send': t.SendMessageResponse,
    'message/stream': t.SendStreamingMessageResponse,
    'tasks/resubscribe': t.SendStreamingMessageResponse,
    'tasks/get': t.GetTaskResponse,
    'tasks/cancel': t.CancelTaskResponse,
    'tasks/pushNotificationConfig/set': t.SetTaskPushNotificationConfigResponse,
    'tasks/pushNotificationConfig/get': t.GetTaskPushNotificationConfigResponse,
    'tasks/pushNotificationConfig/list': t.ListTaskPushNotificationConfigResponse,
    'tasks/pushNotificationConfig/delete': t.DeleteTaskPushNotificationConfigResponse,
    'agent/getAuthenticatedExtendedCard': t.GetAuthenticatedExtendedCardResponse,
}


def rest_result(method, path):
    """The protobuf type of a v0.3 HTTP+JSON success body (None: the SDK reads it otherwise)."""
    if path.endswith('/v1/message:send'):
        return a2a_pb2.SendMessageResponse
    if path.endswith('/v1/message:stream') or path.endswith(':subscribe'):
        return a2a_pb2.StreamResponse
    if path.endswith(':cancel') or re.search(r'/v1/tasks/[^/]+$', path):
        return a2a_pb2.Task
    if path.endswith('/pushNotificationConfigs') and method == 'GET':
        return a2a_pb2.ListTaskPushNotificationConfigResponse
    if '/pushNotificationConfigs' in path and method in ('GET', 'POST'):
        return a2a_pb2.TaskPushNotificationConfig
    return None


# ---------------------------------------------------------------------------------------------
# Strict checking


def unknown_members(raw, model, path='$'):
    """Members of `raw` that `model` (a validated pydantic value) does not hold, and `kind`
    members its type has but `raw` left out, at any depth."""
    found = []
    if isinstance(model, BaseModel) and hasattr(model, 'root') and type(model).model_fields.keys() == {'root'}:
        return unknown_members(raw, model.root, path)
    if isinstance(model, BaseModel) and isinstance(raw, dict):
        fields = type(model).model_fields
        by_alias = {(f.alias or n): n for n, f in fields.items()}
        for key, value in raw.items():
            name = by_alias.get(key)
            if name is None:
                found.append(f'{path}.{key}: not a member of {type(model).__name__}')
            elif not (isinstance(getattr(model, name), dict) and key in ('metadata', 'data', 'params')):
                found += unknown_members(value, getattr(model, name), f'{path}.{key}')
        if 'kind' in by_alias and 'kind' not in raw:
            found.append(f'{path}: no "kind" (the {type(model).__name__} discriminator)')
    elif isinstance(model, list) and isinstance(raw, list):
        for i, (r, m) in enumerate(zip(raw, model)):
            found += unknown_members(r, m, f'{path}[{i}]')
    return found


class Strict:
    def __init__(self):
        self.current = None  # the check running
        self.violations = []
        self.parsed = collections.Counter()
        self.wire = collections.deque(maxlen=8)  # the last exchanges, shown with a failure

    def fail(self, where, what):
        self.violations.append({'check': self.current, 'where': where, 'violation': what})

    def pydantic(self, where, raw_text, model_type, allowed=frozenset()):
        try:
            value = model_type.model_validate_json(raw_text, strict=True)
        except ValidationError as e:
            return self.fail(where, f'not a strict {model_type.__name__}: {e.errors(include_url=False, include_input=False)[:4]}')
        bad = [u for u in unknown_members(json.loads(raw_text), value) if re.sub(r'\[\d+\]', '[]', u.split(':')[0]) not in allowed]
        if bad:
            self.fail(where, f'{model_type.__name__}: {bad[:6]}')
        self.parsed[model_type.__name__] += 1
        return value

    def proto(self, where, raw_text, message_type):
        try:
            json_format.Parse(raw_text, message_type(), ignore_unknown_fields=False)
            self.parsed[f'pb.{message_type.__name__}'] += 1
        except json_format.ParseError as e:
            self.fail(where, f'not a strict a2a_pb2.{message_type.__name__}: {e}')

    def response(self, method, path, status, raw, rpc):
        where = f'JSON-RPC {rpc[1]}' if rpc else f'{method} {path}'
        text = raw.decode(errors='replace')
        if path.endswith('/.well-known/agent-card.json'):
            return self.pydantic(where, text, t.AgentCard, CARD_V1_MEMBERS)
        if rpc:
            model = JSONRPC_RESULTS.get(rpc[1])
            if model is None:
                return self.fail(where, 'no result type known for this method')
            # The extended card is a card too: the same hybrid members allowed.
            allowed = {m.replace('$.', '$.result.', 1) for m in CARD_V1_MEMBERS} if model is t.GetAuthenticatedExtendedCardResponse else frozenset()
            value = self.pydantic(where, text, model, allowed)
            if value is not None and value.root.id != rpc[0]:
                self.fail(where, f'response id {value.root.id!r} for request id {rpc[0]!r}')
            return
        if status >= 400 or status == 204:
            return
        if path.endswith('/v1/card'):
            return self.pydantic(where, text, t.AgentCard, CARD_V1_MEMBERS)
        pb = rest_result(method, path)
        if pb is not None:
            self.proto(where, text, pb)

    def event(self, where, data, rpc):
        if rpc:
            value = self.pydantic(f'{where} (SSE event)', data, t.SendStreamingMessageResponse)
            if value is not None and value.root.id != rpc[0]:
                self.fail(where, f'event id {value.root.id!r} for request id {rpc[0]!r}')
        else:
            self.proto(f'{where} (SSE event)', data, a2a_pb2.StreamResponse)


STRICT = Strict()


class TeeStream(httpx.AsyncByteStream):
    """An SSE body passed through unchanged, each event checked as it goes by."""

    def __init__(self, inner, where, rpc, entry):
        self.inner, self.where, self.rpc, self.entry = inner, where, rpc, entry
        self.buf = b''

    def check(self, raw):
        data = '\n'.join(line[5:].lstrip() for line in raw.decode(errors='replace').splitlines() if line.startswith('data:'))
        if data:
            self.entry.setdefault('events', []).append(data[:300])
            STRICT.event(self.where, data, self.rpc)

    async def __aiter__(self):
        async for chunk in self.inner:
            self.buf += chunk
            while (m := re.search(rb'\r?\n\r?\n', self.buf)) is not None:
                raw, self.buf = self.buf[: m.start()], self.buf[m.end():]
                self.check(raw)
            yield chunk
        if self.buf.strip():
            self.check(self.buf)

    async def aclose(self):
        await self.inner.aclose()


class Recorder(httpx.AsyncBaseTransport):
    """Records each exchange (shown with a failed check) and checks every response strictly."""

    def __init__(self):
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request):
        body = request.content.decode(errors='replace') if request.content else None
        entry = {'request': f'{request.method} {request.url}', 'body': body[:600] if body else None}
        STRICT.wire.append(entry)
        rpc = None
        if body:
            try:
                value = json.loads(body)
                if isinstance(value, dict) and value.get('jsonrpc'):
                    rpc = (value.get('id'), value.get('method'))
            except ValueError:
                pass
        response = await self.inner.handle_async_request(request)
        entry['status'] = response.status_code
        if response.headers.get('content-type', '').startswith('text/event-stream'):
            where = f'JSON-RPC {rpc[1]}' if rpc else f'{request.method} {request.url.path}'
            stream = TeeStream(response.stream, where, rpc, entry)
            return httpx.Response(response.status_code, headers=response.headers, stream=stream, extensions=response.extensions)
        raw = b''.join([chunk async for chunk in response.stream])
        await response.stream.aclose()
        entry['response'] = raw.decode(errors='replace')[:800]
        STRICT.response(request.method, request.url.path, response.status_code, raw, rpc)
        return httpx.Response(response.status_code, headers=response.headers, stream=httpx.ByteStream(raw), extensions=response.extensions)


# ---------------------------------------------------------------------------------------------
# Helpers


class CheckFailed(Exception):
    pass


def expect(cond, what, **ctx):
    if not cond:
        raise CheckFailed(json.dumps({'expected': what, **ctx}, default=str))


def text_part(s):
    return t.Part(root=t.TextPart(text=s))


def msg(prefix, text='hi', context_id=None, task_id=None, parts=None):
    return t.Message(
        role=t.Role.user,
        message_id=f'{prefix}-{uuid.uuid4()}',
        parts=parts or [text_part(text)],
        context_id=context_id,
        task_id=task_id,
    )


def texts(parts):
    return ''.join(p.root.text for p in parts or [] if isinstance(p.root, t.TextPart))


def dump(v):
    return v.model_dump(mode='json', by_alias=True, exclude_none=True) if isinstance(v, BaseModel) else v


def mentions(error_text, *names):
    """`error_text` names one of `names` (case and underscores aside)."""
    flat = re.sub(r'[_\s]', '', error_text.lower())
    return any(re.sub(r'[_\s]', '', n.lower()) in flat for n in names)


class Breaker(ClientCallInterceptor):
    """Applies `context.state['break']` to the JSON-RPC payload: a malformed request sent by the
    SDK's own transport, whose error answer the SDK then parses."""

    async def intercept(self, method_name, request_payload, http_kwargs, agent_card, context):
        if context is not None and 'break' in context.state:
            context.state['break'](request_payload)
        return request_payload, http_kwargs


async def collect(aiter):
    """The events of a stream, each as it was when it arrived: the SDK's task tracker appends
    later artifact chunks into the artifact objects of earlier events."""
    return [copy.deepcopy(ev) async for ev in aiter]


def update_kind(ev):
    """A streamed client event ((task, update) or Message) as the v0.3 `kind` it carried."""
    if isinstance(ev, t.Message):
        return 'message'
    task, update = ev
    return 'task' if update is None else update.kind


# ---------------------------------------------------------------------------------------------
# The scenario


class Run:
    def __init__(self, base, binding, webhook):
        self.base, self.binding, self.webhook = base, binding, webhook
        self.results = {}
        self.hx = httpx.AsyncClient(transport=Recorder(), timeout=30)
        self.card = None
        self.url = None  # the binding's endpoint, as the SDK picked it

    async def check(self, name, fn):
        STRICT.current = name
        STRICT.wire.clear()
        try:
            await fn()
            self.results[name] = 'ok'
        except CheckFailed as e:
            self.results[name] = f'{e} | wire: {json.dumps(list(STRICT.wire))[:2500]}'
        except Exception as e:  # an SDK exception fails the check, with where it was raised
            frame = traceback.extract_tb(e.__traceback__)[-1]
            self.results[name] = (
                f'{type(e).__name__}: {str(e)[:500]} | at {frame.filename.split("site-packages/")[-1]}:{frame.lineno} '
                f'| wire: {json.dumps(list(STRICT.wire))[:2000]}'
            )

    def client(self, streaming, polling=False):
        cfg = ClientConfig(
            httpx_client=self.hx,
            supported_transports=[BINDINGS[self.binding]],
            streaming=streaming,
            polling=polling,
        )
        return ClientFactory(cfg).create(self.card, interceptors=[Breaker()])

    async def send(self, client, m, **config):
        configuration = t.MessageSendConfiguration(**config) if config else None
        evs = await collect(client.send_message(m, configuration=configuration))
        expect(len(evs) == 1, 'one response from a blocking send', got=[update_kind(e) for e in evs])
        return evs[0]

    async def send_task(self, client, m, **config):
        ev = await self.send(client, m, **config)
        expect(isinstance(ev, tuple), 'a Task', got=dump(ev))
        task = ev[0]
        expect(task.kind == 'task', 'kind "task"', got=task.kind)
        return task

    async def rpc_error(self, coro):
        """The JSON-RPC error (code, message, data) or, over HTTP+JSON, (HTTP status, message) a
        call failed with."""
        try:
            result = await coro
        except A2AClientJSONRPCError as e:
            return e.error.code, e.error.message, e.error.data
        except A2AClientHTTPError as e:
            return e.status_code, e.message, None
        raise CheckFailed(json.dumps({'expected': 'an error', 'got': dump(result)}, default=str))

    async def run(self):
        async def card():
            c = await A2ACardResolver(self.hx, self.base).get_agent_card()
            self.card = c
            want = BINDINGS[self.binding].value
            interfaces = {c.preferred_transport or 'JSONRPC': c.url, **{i.transport: i.url for i in c.additional_interfaces or []}}
            detail = {'protocolVersion': c.protocol_version, 'url': c.url, 'preferredTransport': c.preferred_transport, 'interfaces': interfaces}
            expect((c.protocol_version or '').startswith('0.3'), 'protocolVersion 0.3.x', **detail)
            expect(want in interfaces, f'an interface for {want}', **detail)
            authority = self.base.split('://', 1)[-1].rstrip('/')
            expect(all(u == authority if t == 'GRPC' else u.startswith(self.base.rstrip('/')) for t, u in interfaces.items()),
                   f'interfaces on {self.base} (gRPC at {authority})', **detail)
            expect(c.capabilities.streaming and c.capabilities.push_notifications, 'streaming and pushNotifications', got=dump(c.capabilities))
            expect(c.supports_authenticated_extended_card, 'supportsAuthenticatedExtendedCard')
            client = self.client(False)
            transport = client._transport
            expect(type(transport).__name__ == TRANSPORTS[self.binding], f'the SDK picks {TRANSPORTS[self.binding]}', got=type(transport).__name__)
            expect(transport.url.rstrip('/') == interfaces[want].rstrip('/'), f'the SDK calls the {want} url', got=transport.url, **detail)
            self.url = transport.url.rstrip('/')

        await self.check('card', card)
        if self.card is None:
            for name in CHECKS[1:]:
                self.results[name] = 'not run: the card check failed'
            return
        blocking, streaming = self.client(False), self.client(True)
        polling = self.client(False, polling=True)
        shared = {}

        async def send_text():
            task = await self.send_task(blocking, msg('tck-complete-task'))
            shared['completed'] = task
            got = {'state': task.status.state.value, 'status_text': texts(task.status.message.parts if task.status.message else [])}
            expect(got == {'state': 'completed', 'status_text': 'Hello from TCK'}, 'completed, "Hello from TCK"', got=got)
            expect(task.id and task.context_id, 'task and context ids', got=dump(task))

        async def send_parts():
            data = {'n': 1, 'nested': {'list': [1, 'two', None, True]}}
            raw = b'\x00\x01 bytes \xff'
            parts = [
                text_part('echo me'),
                t.Part(root=t.FilePart(file=t.FileWithBytes(bytes=base64.b64encode(raw).decode(), name='in.bin', mime_type='application/octet-stream'))),
                t.Part(root=t.FilePart(file=t.FileWithUri(uri='https://example.com/in.txt', name='in.txt', mime_type='text/plain'))),
                t.Part(root=t.DataPart(data=data)),
            ]
            sent = msg('echo', parts=parts)
            task = await self.send_task(blocking, sent)
            expect(task.status.state == t.TaskState.completed, 'completed', got=task.status.state)
            full = await blocking.get_task(t.TaskQueryParams(id=task.id))
            first = next((m for m in full.history or [] if m.message_id == sent.message_id), None)
            expect(first is not None, 'the sent message in the history', got=dump(full))
            got = [p.root for p in first.parts]
            kinds = [p.kind for p in got]
            expect(kinds == ['text', 'file', 'file', 'data'], 'the four parts back, in order', got=kinds)
            f_bytes, f_uri = got[1].file, got[2].file
            expect(isinstance(f_bytes, t.FileWithBytes) and base64.b64decode(f_bytes.bytes) == raw, 'the bytes back', got=dump(f_bytes))
            expect(isinstance(f_uri, t.FileWithUri) and f_uri.uri == 'https://example.com/in.txt', 'the uri back', got=dump(f_uri))
            got_meta = [f_bytes.name, f_bytes.mime_type, f_uri.name, f_uri.mime_type]
            expect(got_meta == ['in.bin', 'application/octet-stream', 'in.txt', 'text/plain'], 'names and mime types back', got=[dump(f_bytes), dump(f_uri)])
            expect(got[3].data == data, 'the data back', got=got[3].data)

        async def first_part(prefix):
            task = await self.send_task(blocking, msg(prefix))
            expect(task.status.state == t.TaskState.completed, 'completed', got=dump(task.status))
            a = task.artifacts or []
            expect(a and a[0].parts, 'an artifact with a part', got=dump(task))
            return a[0].parts[0].root

        async def send_artifact_text():
            p = await first_part('tck-artifact-text')
            expect(isinstance(p, t.TextPart) and p.text == 'Generated text content', 'a text part "Generated text content"', got=dump(p))

        async def send_artifact_file_bytes():
            p = await first_part('tck-artifact-file')
            expect(isinstance(p, t.FilePart) and isinstance(p.file, t.FileWithBytes), 'a file part with bytes', got=dump(p))
            try:
                content = base64.b64decode(p.file.bytes, validate=True)
            except ValueError:
                content = None
            got = [content, p.file.name, p.file.mime_type]
            expect(got == [b'Generated file content', 'output.txt', 'text/plain'], 'bytes (base64) "Generated file content", output.txt, text/plain', got=dump(p))

        async def send_artifact_file_uri():
            p = await first_part('tck-artifact-file-url')
            expect(isinstance(p, t.FilePart) and isinstance(p.file, t.FileWithUri), 'a file part with a uri', got=dump(p))
            got = [p.file.uri, p.file.name, p.file.mime_type]
            expect(got == ['https://example.com/output.txt', 'output.txt', 'text/plain'], 'https://example.com/output.txt, output.txt, text/plain', got=dump(p))

        async def send_artifact_data():
            p = await first_part('tck-artifact-data')
            expect(isinstance(p, t.DataPart) and p.data == {'key': 'value', 'count': 42}, 'a data part {"key": "value", "count": 42}', got=dump(p))

        async def send_rejected():
            task = await self.send_task(blocking, msg('tck-reject-task'))
            expect(task.status.state == t.TaskState.rejected, 'rejected', got=task.status.state)

        async def send_direct_message():
            ev = await self.send(blocking, msg('tck-message-response'))
            expect(isinstance(ev, t.Message), 'a Message', got=dump(ev))
            got = [ev.kind, ev.role.value, texts(ev.parts)]
            expect(got == ['message', 'agent', 'Direct message response'], 'a direct agent message', got=got)

        async def input_required_reply():
            task = await self.send_task(blocking, msg('tck-input-required'))
            expect(task.status.state == t.TaskState.input_required, 'input-required', got=task.status.state)
            expect(texts(task.status.message.parts if task.status.message else []) == 'Please provide more input', 'the question', got=dump(task.status))
            done = await self.send_task(blocking, msg('tck-complete-task', context_id=task.context_id, task_id=task.id))
            got = [done.id == task.id, done.status.state.value]
            expect(got == [True, 'completed'], 'the same task completed', got=got)

        async def stream():
            evs = await collect(streaming.send_message(msg('tck-stream-001')))
            ks = [update_kind(e) for e in evs]
            expect(ks == ['task', 'status-update', 'artifact-update', 'status-update'], 'task, status-update, artifact-update, status-update', got=ks)
            first = evs[0][0]
            updates = [e[1] for e in evs[1:]]
            got = {
                'states': [updates[0].status.state.value, updates[2].status.state.value],
                'final': [updates[0].final, updates[2].final],
                'artifact': texts(updates[1].artifact.parts),
                'one_task': len({first.id, *(u.task_id for u in updates)}) == 1,
                'one_context': len({first.context_id, *(u.context_id for u in updates)}) == 1,
            }
            want = {'states': ['working', 'completed'], 'final': [False, True], 'artifact': 'Generated text content', 'one_task': True, 'one_context': True}
            expect(got == want, want, got=got)

        async def stream_chunked():
            evs = await collect(streaming.send_message(msg('tck-stream-artifact-chunked')))
            chunks = [[texts(u.artifact.parts), bool(u.append), bool(u.last_chunk)] for _, u in evs if isinstance(u, t.TaskArtifactUpdateEvent)]
            expect(chunks == [['chunk-1 ', False, False], ['chunk-2', True, True]], 'two chunks, append + lastChunk', got=chunks)
            last = evs[-1][1]
            expect(isinstance(last, t.TaskStatusUpdateEvent) and last.final and last.status.state == t.TaskState.completed, 'a final completed status-update', got=dump(last))

        async def stream_direct_message():
            evs = await collect(streaming.send_message(msg('tck-message-response')))
            got = [update_kind(e) for e in evs]
            expect(got == ['message'], 'one message event', got=got)
            expect(texts(evs[0].parts) == 'Direct message response', 'its text', got=dump(evs[0]))

        async def get():
            done = shared.get('completed')
            expect(done is not None, 'send_text to have made a task')
            task = await blocking.get_task(t.TaskQueryParams(id=done.id, history_length=1))
            got = {'kind': task.kind, 'id': task.id == done.id, 'state': task.status.state.value, 'history': len(task.history or [])}
            expect(got == {'kind': 'task', 'id': True, 'state': 'completed', 'history': 1}, 'the task with historyLength 1', got=got)
            full = await blocking.get_task(t.TaskQueryParams(id=done.id))
            expect(full.history and full.history[0].role == t.Role.user, 'the full history, from the user message', got=dump(full))

        async def get_missing():
            code, message, data = await self.rpc_error(blocking.get_task(t.TaskQueryParams(id=f'no-such-task-{uuid.uuid4()}')))
            want = -32001 if self.binding == 'jsonrpc' else 404
            expect(code == want, f'TaskNotFoundError ({want})', got=[code, message, data])

        cancel = {}

        async def cancel_input_required():
            task = await self.send_task(blocking, msg('tck-input-required'))
            expect(task.status.state == t.TaskState.input_required, 'input-required', got=task.status.state)
            canceled = await blocking.cancel_task(t.TaskIdParams(id=task.id))
            cancel['id'] = task.id
            again = await blocking.get_task(t.TaskQueryParams(id=task.id))
            got = [canceled.kind, canceled.status.state.value, again.status.state.value]
            expect(got == ['task', 'canceled', 'canceled'], 'canceled (the answer and tasks/get)', got=got)

        async def cancel_terminal():
            expect('id' in cancel, 'cancel_input_required to have canceled a task')
            code, message, data = await self.rpc_error(blocking.cancel_task(t.TaskIdParams(id=cancel['id'])))
            want = -32002 if self.binding == 'jsonrpc' else 409
            expect(code == want, f'TaskNotCancelableError ({want})', got=[code, message, data])

        async def resubscribe_running():
            task = await self.send_task(polling, msg('test-resubscribe-message-id'))
            expect(task.status.state in (t.TaskState.submitted, t.TaskState.working), 'a running task (blocking: false)', got=task.status.state)
            evs = await collect(streaming.resubscribe(t.TaskIdParams(id=task.id)))
            ks = [update_kind(e) for e in evs]
            expect(evs, 'events', got=ks)
            last = evs[-1][1]
            expect(isinstance(last, t.TaskStatusUpdateEvent) and last.final and last.status.state == t.TaskState.completed, 'the stream ends with a final completed status-update', got=ks, last=dump(last))
            expect(all((u.task_id if u else tk.id) == task.id for tk, u in evs), 'every event of the task', got=ks)

        push = {}

        async def push_config_set():
            task = await self.send_task(polling, msg('test-resubscribe-message-id'))
            key = f'py-{self.binding}-{uuid.uuid4().hex[:8]}'
            token = uuid.uuid4().hex
            url = f'{self.webhook}/hook/{key}'
            push.update(task=task.id, key=key, token=token, url=url)
            config = t.TaskPushNotificationConfig(
                task_id=task.id, push_notification_config=t.PushNotificationConfig(id='cfg-py', url=url, token=token)
            )
            got = await blocking.set_task_callback(config)
            c = got.push_notification_config
            expect([got.task_id, c.id, c.url, c.token] == [task.id, 'cfg-py', url, token], 'the config echoed', got=dump(got))
            push['set'] = True

        async def push_config_get():
            expect(push.get('set'), 'push_config_set to have set a config')
            got = await blocking.get_task_callback(t.GetTaskPushNotificationConfigParams(id=push['task'], push_notification_config_id='cfg-py'))
            c = got.push_notification_config
            expect([got.task_id, c.id, c.url] == [push['task'], 'cfg-py', push['url']], 'the config', got=dump(got))

        async def push_config_list():
            expect(push.get('set'), 'push_config_set to have set a config')
            configs = await self.list_configs(push['task'])
            expect([(c.task_id, c.push_notification_config.id, c.push_notification_config.url) for c in configs] == [(push['task'], 'cfg-py', push['url'])], 'one listed config', got=[dump(c) for c in configs])

        async def push_delivery():
            expect(push.get('set'), 'push_config_set to have set a config')
            push['delivery'] = await self.wait_delivery(push['key'], push['task'], push['token'])

        async def push_config_delete():
            expect(push.get('set'), 'push_config_set to have set a config')
            await self.delete_config(push['task'], 'cfg-py')
            after = await self.list_configs(push['task'])
            expect(after == [], 'no config after the delete', got=[dump(c) for c in after])

        async def extended_card():
            c = await blocking.get_card()
            expect('(extended)' in c.name, 'the extended card', got=c.name)

        async def bad_input_missing_message_id():
            await self.bad_input(blocking, lambda m: m.pop('messageId', None), ('messageId',))

        async def bad_input_unknown_part_kind():
            # The field: the part (`parts[0]`, over HTTP+JSON `content[0]`), or its unknown kind.
            if self.binding == 'jsonrpc':

                def video(m):
                    m['parts'] = [{'kind': 'video', 'uri': 'https://example.com/clip.mp4'}]

                await self.bad_input(blocking, video, ('parts[0]', 'kind', 'video'))
            else:

                def video(m):
                    m['content'] = [{'video': {'uri': 'https://example.com/clip.mp4'}}]

                await self.bad_input(blocking, video, ('content[0]', 'video'))

        checks = [
            ('send_text', send_text),
            ('send_parts', send_parts),
            ('send_artifact_text', send_artifact_text),
            ('send_artifact_file_bytes', send_artifact_file_bytes),
            ('send_artifact_file_uri', send_artifact_file_uri),
            ('send_artifact_data', send_artifact_data),
            ('send_rejected', send_rejected),
            ('send_direct_message', send_direct_message),
            ('input_required_reply', input_required_reply),
            ('stream', stream),
            ('stream_chunked', stream_chunked),
            ('stream_direct_message', stream_direct_message),
            ('get', get),
            ('get_missing', get_missing),
            ('cancel_input_required', cancel_input_required),
            ('cancel_terminal', cancel_terminal),
            ('resubscribe_running', resubscribe_running),
            ('push_config_set', push_config_set),
            ('push_config_get', push_config_get),
            ('push_config_list', push_config_list),
            ('push_delivery', push_delivery),
            ('push_config_delete', push_config_delete),
            ('extended_card', extended_card),
            ('bad_input_missing_message_id', bad_input_missing_message_id),
            ('bad_input_unknown_part_kind', bad_input_unknown_part_kind),
        ]
        assert [n for n, _ in checks] == CHECKS[1:], 'CHECKS lists every check, in order'
        for name, fn in checks:
            await self.check(name, fn)
        STRICT.current = None

    async def bad_input(self, client, breaker, names):
        """A message/send whose message `breaker` spoils: the v0.3 error naming the field."""
        if self.binding == 'jsonrpc':

            def spoil(payload):
                breaker(payload['params']['message'])

            ctx = ClientCallContext(state={'break': spoil})
            try:
                got = await collect(client.send_message(msg('echo'), context=ctx))
            except A2AClientJSONRPCError as e:
                err = e.error
                expect(err.code in (-32602, -32600), 'InvalidParams (-32602) or InvalidRequest (-32600)', got=dump(err))
                expect(mentions(err.message, *names), f'an error message naming {" or ".join(names)}', got=dump(err))
                return
            raise CheckFailed(json.dumps({'expected': 'an error', 'got': [dump(e) for e in got]}, default=str))
        # HTTP+JSON: the ProtoJSON the SDK sends (its own converter), spoiled and posted directly.
        sent = msg('echo')
        body = json_format.MessageToDict(
            a2a_pb2.SendMessageRequest(request=proto_utils.ToProto.message(sent), configuration=a2a_pb2.SendMessageConfiguration(blocking=True))
        )
        breaker(body['message'])
        r = await self.hx.post(f'{self.url}/v1/message:send', json=body)
        try:
            err = r.json()
        except ValueError:
            err = None
        detail = {'status': r.status_code, 'body': r.text[:600]}
        expect(400 <= r.status_code < 500, 'an HTTP 4xx', **detail)
        expect(isinstance(err, dict) and isinstance(err.get('message'), str), 'a JSON error body with a message', **detail)
        expect(mentions(err['message'], *names), f'an error message naming {" or ".join(names)}', **detail)

    async def list_configs(self, task_id):
        """tasks/pushNotificationConfig/list (0.3.26's Client has no method for it): the SDK's
        request and response types over JSON-RPC; GET /v1/tasks/{id}/pushNotificationConfigs,
        parsed as the SDK's protobuf, over HTTP+JSON."""
        if self.binding == 'jsonrpc':
            req = t.ListTaskPushNotificationConfigRequest(id=str(uuid.uuid4()), params=t.ListTaskPushNotificationConfigParams(id=task_id))
            r = await self.hx.post(self.url, json=req.model_dump(mode='json', exclude_none=True))
            res = t.ListTaskPushNotificationConfigResponse.model_validate(r.json()).root
            if isinstance(res, t.JSONRPCErrorResponse):
                raise A2AClientJSONRPCError(res)
            return res.result
        r = await self.hx.get(f'{self.url}/v1/tasks/{task_id}/pushNotificationConfigs')
        expect(r.status_code == 200, 'HTTP 200', status=r.status_code, body=r.text[:600])
        pb = json_format.Parse(r.text, a2a_pb2.ListTaskPushNotificationConfigResponse())
        return [proto_utils.FromProto.task_push_notification_config(c) for c in pb.configs]

    async def delete_config(self, task_id, config_id):
        if self.binding == 'jsonrpc':
            req = t.DeleteTaskPushNotificationConfigRequest(
                id=str(uuid.uuid4()), params=t.DeleteTaskPushNotificationConfigParams(id=task_id, push_notification_config_id=config_id)
            )
            r = await self.hx.post(self.url, json=req.model_dump(mode='json', exclude_none=True))
            res = t.DeleteTaskPushNotificationConfigResponse.model_validate(r.json()).root
            if isinstance(res, t.JSONRPCErrorResponse):
                raise A2AClientJSONRPCError(res)
            expect(res.result is None, 'result null', got=r.text[:300])
            return
        r = await self.hx.delete(f'{self.url}/v1/tasks/{task_id}/pushNotificationConfigs/{config_id}')
        expect(r.status_code in (200, 204), 'HTTP 200 or 204', status=r.status_code, body=r.text[:600])

    async def wait_delivery(self, key, task_id, token):
        """Polls the receiver until the task's completed state arrived (10 s). Every pushed body
        must be a strict v0.3 Task (kind "task", lowercase state) with the config's token."""
        deadline = time.monotonic() + 10
        records = []
        async with httpx.AsyncClient(timeout=10) as plain:
            while time.monotonic() < deadline:
                records = (await plain.get(f'{self.webhook}/received/{key}')).json()
                done = False
                for r in records:
                    task = STRICT.pydantic(f'push to {key}', r['body'], t.Task)
                    expect(task is not None, 'a strict v0.3 Task pushed', body=r['body'][:600], violations=STRICT.violations[-1:])
                    expect(json.loads(r['body']).get('kind') == 'task', 'kind "task" in the pushed body', body=r['body'][:600])
                    expect(task.id == task_id, 'the task pushed', body=r['body'][:600])
                    expect(r.get('token') == token, 'X-A2A-Notification-Token: the config token', got=r.get('token'))
                    done = done or task.status.state == t.TaskState.completed
                if done:
                    return len(records)
                await asyncio.sleep(0.1)
        raise CheckFailed(json.dumps({'expected': 'a completed Task pushed within 10 s', 'records': records}))


async def main():
    if len(sys.argv) < 4 or sys.argv[2] not in BINDINGS:
        sys.exit(f'usage: py_client.py BASE_URL ({"|".join(BINDINGS)}) WEBHOOK_URL')
    base, binding, webhook = sys.argv[1].rstrip('/'), sys.argv[2], sys.argv[3].rstrip('/')
    run = Run(base, binding, webhook)
    try:
        await run.run()
    finally:
        await run.hx.aclose()
    ok = not STRICT.violations and sum(STRICT.parsed.values()) > 0
    run.results['strict_wire'] = 'ok' if ok else json.dumps({'parsed': dict(STRICT.parsed), 'violations': STRICT.violations[:20]})
    print(json.dumps({'parsed': dict(STRICT.parsed)}), file=sys.stderr)
    print(json.dumps(run.results))


if __name__ == '__main__':
    asyncio.run(main())
