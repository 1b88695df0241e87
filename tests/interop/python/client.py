"""The official Python client (a2a-sdk 1.3.0) against an a2a-kit server, for
tests/interop_python_client.rs.

Usage: python client.py BASE_URL

Runs card / send / stream / get / list / cancel / subscribe (and push configs) over JSON-RPC
and HTTP+JSON against the a2a-kit TestAgent (skills are picked with message metadata
`skillId`). Every HTTP response the SDK receives is also parsed strictly, with
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
import re
import sys
import traceback
import uuid
from collections import Counter

import httpx
from google.protobuf import empty_pb2
from google.protobuf.json_format import Parse
from google.rpc import error_details_pb2

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

# ---------------------------------------------------------------------------------------------
# Strict checking of everything on the wire


class Checker:
    def __init__(self):
        self.parsed = Counter()
        self.violations = []

    def fail(self, where, error):
        self.violations.append({'where': where, 'error': str(error)[:500]})

    def strict(self, where, payload, message_type):
        """Parse a JSON value strictly into `message_type`, then apply the checks that
        ProtoJSON parsers let through (see lint)."""
        try:
            Parse(json.dumps(payload), message_type(), ignore_unknown_fields=False)
            self.parsed[message_type.DESCRIPTOR.name] += 1
        except Exception as e:  # ParseError, TypeError
            self.fail(where, f'{message_type.DESCRIPTOR.full_name}: {e}')
        self.lint(where, payload)

    # Struct / Value members hold arbitrary JSON: their content is not checked.
    FREE_FORM = {'metadata', 'data', 'params', 'header'}

    def lint(self, where, value, path='$'):
        """What strict Parse still accepts but a canonical ProtoJSON writer never emits:
        snake_case names, nulls, enums as numbers, timestamps not in UTC `Z`."""
        if isinstance(value, dict):
            for key, v in value.items():
                at = f'{path}.{key}'
                if key in self.FREE_FORM:
                    continue
                if '_' in key and key != '@type':
                    self.fail(where, f'{at}: snake_case member name (ProtoJSON writes lowerCamelCase)')
                if v is None:
                    self.fail(where, f'{at}: null (omit the member instead)')
                if key in ('state', 'role') and not isinstance(v, str):
                    self.fail(where, f'{at}: enum written as {v!r}, not by name')
                if key == 'timestamp' and isinstance(v, str) and not v.endswith('Z'):
                    self.fail(where, f'{at}: timestamp {v!r} is not UTC (Z)')
                self.lint(where, v, at)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.lint(where, v, f'{path}[{i}]')

    def error_details(self, where, details):
        if not isinstance(details, list):
            self.fail(where, f'error details must be a list, got {type(details).__name__}')
            return
        for d in details:
            if not isinstance(d, dict) or '@type' not in d:
                self.fail(where, f'error detail without @type: {d!r}')
                continue
            body = {k: v for k, v in d.items() if k != '@type'}
            if d['@type'].endswith('google.rpc.ErrorInfo'):
                self.strict(where + ' ErrorInfo', body, error_details_pb2.ErrorInfo)
            elif d['@type'].endswith('google.rpc.BadRequest'):
                self.strict(where + ' BadRequest', body, error_details_pb2.BadRequest)

    def jsonrpc_envelope(self, where, env, request_id, result_type):
        if not isinstance(env, dict):
            return self.fail(where, 'the response is not a JSON object')
        extra = set(env) - {'jsonrpc', 'id', 'result', 'error'}
        if extra:
            self.fail(where, f'unexpected envelope members {sorted(extra)}')
        if env.get('jsonrpc') != '2.0':
            self.fail(where, f'jsonrpc is {env.get("jsonrpc")!r}')
        if request_id is not None and env.get('id') != request_id:
            self.fail(where, f'id {env.get("id")!r} does not echo the request id {request_id!r}')
        if ('result' in env) == ('error' in env):
            return self.fail(where, 'exactly one of result / error is required')
        if 'error' in env:
            err = env['error']
            if not isinstance(err.get('code'), int) or not isinstance(err.get('message'), str):
                self.fail(where, f'malformed error {err!r}')
            self.error_details(where, err.get('data', []))
            self.parsed['JsonRpcError'] += 1
        elif result_type is empty_pb2.Empty:
            self.strict(where, env['result'], empty_pb2.Empty)
        else:
            self.strict(where, env['result'], result_type)

    def rest_error(self, where, body):
        err = body.get('error') if isinstance(body, dict) else None
        if not isinstance(err, dict):
            return self.fail(where, f'REST error body is not {{"error": {{...}}}}: {body!r}')
        for key, typ in (('code', int), ('status', str), ('message', str)):
            if not isinstance(err.get(key), typ):
                self.fail(where, f'REST error `{key}` missing or not {typ.__name__}')
        self.error_details(where, err.get('details', []))
        self.parsed['RestError'] += 1


CHECK = Checker()

JSONRPC_RESULTS = {
    'SendMessage': SendMessageResponse,
    'SendStreamingMessage': StreamResponse,
    'SubscribeToTask': StreamResponse,
    'GetTask': Task,
    'ListTasks': ListTasksResponse,
    'CancelTask': Task,
    'CreateTaskPushNotificationConfig': TaskPushNotificationConfig,
    'GetTaskPushNotificationConfig': TaskPushNotificationConfig,
    'ListTaskPushNotificationConfigs': ListTaskPushNotificationConfigsResponse,
    'DeleteTaskPushNotificationConfig': empty_pb2.Empty,
    'GetExtendedAgentCard': AgentCard,
}


def rest_result_type(method, path):
    if path.endswith('/message:send'):
        return SendMessageResponse
    if path.endswith('/message:stream') or path.endswith(':subscribe'):
        return StreamResponse
    if path.endswith(':cancel'):
        return Task
    if path.endswith('/extendedAgentCard'):
        return AgentCard
    if '/pushNotificationConfigs' in path:
        if method == 'DELETE':
            return empty_pb2.Empty
        if path.endswith('/pushNotificationConfigs') and method == 'GET':
            return ListTaskPushNotificationConfigsResponse
        return TaskPushNotificationConfig
    if path.endswith('/tasks'):
        return ListTasksResponse
    return Task


def sse_events(raw: bytes):
    """Split one SSE event block into (event name, data)."""
    name, data = 'message', []
    for line in raw.decode('utf-8').splitlines():
        if line.startswith(':') or not line:
            continue
        field, _, value = line.partition(':')
        value = value[1:] if value.startswith(' ') else value
        if field == 'data':
            data.append(value)
        elif field == 'event':
            name = value
    return name, '\n'.join(data) if data else None


class TeeStream(httpx.AsyncByteStream):
    """Passes an SSE body through unchanged, checking each event as it goes by."""

    def __init__(self, inner, where, jsonrpc_id, is_jsonrpc):
        self.inner, self.where, self.jsonrpc_id, self.is_jsonrpc = inner, where, jsonrpc_id, is_jsonrpc
        self.buf = b''

    def check(self, raw):
        name, data = sse_events(raw)
        if data is None:
            return
        where = f'{self.where} (SSE event)'
        try:
            value = json.loads(data)
        except ValueError as e:
            return CHECK.fail(where, f'event data is not JSON: {e}')
        if self.is_jsonrpc:
            CHECK.jsonrpc_envelope(where, value, self.jsonrpc_id, StreamResponse)
        elif name == 'error' or (isinstance(value, dict) and 'error' in value):
            CHECK.rest_error(where, value)
        else:
            CHECK.strict(where, value, StreamResponse)

    async def __aiter__(self):
        async for chunk in self.inner:
            self.buf += chunk
            while True:
                m = re.search(rb'\r?\n\r?\n', self.buf)
                if not m:
                    break
                raw, self.buf = self.buf[: m.start()], self.buf[m.end():]
                self.check(raw)
            yield chunk
        if self.buf.strip():
            self.check(self.buf)

    async def aclose(self):
        await self.inner.aclose()


class StrictTransport(httpx.AsyncBaseTransport):
    def __init__(self):
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request):
        response = await self.inner.handle_async_request(request)
        path = request.url.path
        where = f'{request.method} {path}'
        jsonrpc_id, rpc_method = None, None
        if request.method == 'POST' and request.content:
            try:
                body = json.loads(request.content)
                if isinstance(body, dict) and 'jsonrpc' in body:
                    jsonrpc_id, rpc_method = body.get('id'), body.get('method')
                    where = f'JSON-RPC {rpc_method}'
            except ValueError:
                pass
        content_type = response.headers.get('content-type', '')
        if content_type.startswith('text/event-stream'):
            stream = TeeStream(response.stream, where, jsonrpc_id, rpc_method is not None)
            return httpx.Response(
                response.status_code, headers=response.headers, stream=stream, extensions=response.extensions
            )
        raw = b''.join([chunk async for chunk in response.stream])
        await response.stream.aclose()
        self.check(where, request, response.status_code, raw, jsonrpc_id, rpc_method)
        return httpx.Response(
            response.status_code, headers=response.headers, stream=httpx.ByteStream(raw), extensions=response.extensions
        )

    @staticmethod
    def check(where, request, status, raw, jsonrpc_id, rpc_method):
        if status == 304:
            return
        try:
            value = json.loads(raw) if raw.strip() else None
        except ValueError as e:
            return CHECK.fail(where, f'body is not JSON: {e}')
        if request.url.path.endswith('/.well-known/agent-card.json'):
            return CHECK.strict(where, value, AgentCard)
        if rpc_method is not None:
            return CHECK.jsonrpc_envelope(where, value, jsonrpc_id, JSONRPC_RESULTS.get(rpc_method))
        if status >= 400:
            return CHECK.rest_error(where, value)
        result_type = rest_result_type(request.method, request.url.path)
        CHECK.strict(where, value if value is not None else {}, result_type)


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
    hx = httpx.AsyncClient(transport=StrictTransport(), timeout=60)
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
