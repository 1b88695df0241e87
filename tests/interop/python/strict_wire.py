"""Strict checking of everything an a2a-sdk client receives on the wire, shared by
tests/interop/python/client.py and tests/interop/conformance/py_client.py.

`StrictTransport(strict)` is an httpx transport: every response body and every SSE event is
parsed with `google.protobuf.json_format.Parse(..., ignore_unknown_fields=False)` into the SDK's
own protobuf types (JSON-RPC results unwrapped from their envelope, error details as
google.rpc.ErrorInfo / BadRequest), and linted for what strict ProtoJSON parsing still accepts
but a canonical writer never emits (snake_case names, nulls, numeric enums, non-UTC
timestamps). Deviations are collected in `strict.violations`, parsed types counted in
`strict.parsed`.

Over gRPC the messages are protobuf already, decoded by the SDK's own stubs: the channel
interceptors of `grpc_interceptors(strict)` check instead that every response message (each
unary answer, each stream message) carries no field the SDK's schema does not know (unknown
fields, at any depth) and no enum value its enums do not name, and that every error status
carries `grpc-status-details-bin`: a `google.rpc.Status` whose code and message are the
call's, whose details parse (`ErrorInfo`, `BadRequest`) with nothing unknown in them, and,
in the conformance profile, with an `ErrorInfo` of domain `a2a-protocol.org`.

`Strict(conformance=True)` is the stricter profile of the conformance client: violations name
the check running (`strict.current`); error details must carry a
`type.googleapis.com/google.rpc.ErrorInfo`; the JSON-RPC `id` is always compared; envelopes
(REST error bodies, JSON-RPC errors) admit no extra members; an empty 2xx REST body and a
JSON-RPC method with no known result type are violations.
"""

import json
import re
from collections import Counter

# The A2A 0.3 members a card served to both kinds of client carries beside its 1.0 fields
# (as the SDK's own card reader, `parse_agent_card`, reads them): at the top, in each skill,
# and each security scheme's OpenAPI members beside its 1.0 member.
V03_CARD_MEMBERS = ('protocolVersion', 'url', 'preferredTransport', 'additionalInterfaces',
                    'supportsAuthenticatedExtendedCard', 'security')
V03_SCHEME_MEMBERS = ('type', 'in', 'name', 'scheme', 'bearerFormat', 'flows',
                      'oauth2MetadataUrl', 'openIdConnectUrl', 'description')


def without_v03_card_members(card):
    """The card without its A2A 0.3 members (only those): what is left is parsed strictly."""
    if not isinstance(card, dict):
        return card
    card = {k: v for k, v in card.items() if k not in V03_CARD_MEMBERS}
    if isinstance(card.get('skills'), list):
        card['skills'] = [{k: v for k, v in s.items() if k != 'security'} if isinstance(s, dict) else s
                          for s in card['skills']]
    if isinstance(card.get('securitySchemes'), dict):
        card['securitySchemes'] = {
            name: {k: v for k, v in scheme.items() if k not in V03_SCHEME_MEMBERS} if isinstance(scheme, dict) else scheme
            for name, scheme in card['securitySchemes'].items()}
    return card

import grpc
import httpx
from google.protobuf import empty_pb2
from google.protobuf.json_format import MessageToDict, Parse
from google.protobuf.unknown_fields import UnknownFieldSet
from google.rpc import error_details_pb2, status_pb2

from a2a.types import (
    AgentCard,
    ListTaskPushNotificationConfigsResponse,
    ListTasksResponse,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
)



class Strict:
    # Struct / Value members hold arbitrary JSON: their content is not checked.
    FREE_FORM = {'metadata', 'data', 'params', 'header'}

    def __init__(self, conformance=False):
        self.conformance = conformance
        self.parsed = Counter()
        self.violations = []
        self.current = None  # the check running, to attribute violations (conformance)
        self.last_body = ''  # the last non-SSE response body

    def fail(self, where, error):
        if self.conformance:
            self.violations.append({'check': self.current, 'where': where, 'error': str(error)[:600]})
        else:
            self.violations.append({'where': where, 'error': str(error)[:500]})

    def parse(self, where, payload, message_type):
        """Parse a JSON value strictly into `message_type`, then lint what ProtoJSON parsers
        still accept but a canonical writer never emits."""
        try:
            Parse(json.dumps(payload), message_type(), ignore_unknown_fields=False)
            self.parsed[message_type.DESCRIPTOR.name] += 1
        except Exception as e:  # ParseError, TypeError
            self.fail(where, f'{message_type.DESCRIPTOR.full_name}: {e}')
        self.lint(where, payload)

    def lint(self, where, value, path='$'):
        """Snake_case names, nulls, enums as numbers, timestamps not in UTC `Z`."""
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

    def is_type(self, type_url, name):
        # The conformance profile wants the canonical type URL; otherwise any prefix will do.
        return type_url == f'type.googleapis.com/{name}' if self.conformance else type_url.endswith(name)

    def error_details(self, where, details):
        if not isinstance(details, list):
            return self.fail(where, f'error details must be a list, got {type(details).__name__}')
        infos = 0
        for d in details:
            if not isinstance(d, dict) or '@type' not in d:
                self.fail(where, f'error detail without @type: {d!r}')
                continue
            body = {k: v for k, v in d.items() if k != '@type'}
            if self.is_type(d['@type'], 'google.rpc.ErrorInfo'):
                infos += 1
                self.parse(where + ' ErrorInfo', body, error_details_pb2.ErrorInfo)
            elif self.is_type(d['@type'], 'google.rpc.BadRequest'):
                self.parse(where + ' BadRequest', body, error_details_pb2.BadRequest)
        if infos == 0 and self.conformance:
            self.fail(where, 'error without a google.rpc.ErrorInfo detail (clients map errors by its reason)')

    def jsonrpc_envelope(self, where, env, request_id, result_type):
        if not isinstance(env, dict):
            return self.fail(where, 'the response is not a JSON object')
        extra = set(env) - {'jsonrpc', 'id', 'result', 'error'}
        if extra:
            self.fail(where, f'unexpected envelope members {sorted(extra)}')
        if env.get('jsonrpc') != '2.0':
            self.fail(where, f'jsonrpc is {env.get("jsonrpc")!r}')
        if (request_id is not None or self.conformance) and env.get('id') != request_id:
            self.fail(where, f'id {env.get("id")!r} does not echo the request id {request_id!r}')
        if ('result' in env) == ('error' in env):
            return self.fail(where, 'exactly one of result / error is required')
        if 'error' in env:
            err = env['error']
            if not isinstance(err, dict) or not isinstance(err.get('code'), int) or not isinstance(err.get('message'), str):
                self.fail(where, f'malformed error {err!r}')
                if self.conformance or not isinstance(err, dict):
                    return
            self.error_details(where, err.get('data', []))
            self.parsed['JsonRpcError'] += 1
        elif result_type is None:
            self.fail(where, 'no result type known for this method')
        else:
            self.parse(where, env['result'], result_type)

    def rest_error(self, where, body):
        err = body.get('error') if isinstance(body, dict) else None
        if not isinstance(err, dict) or (self.conformance and set(body) != {'error'}):
            return self.fail(where, f'REST error body is not {{"error": {{...}}}}: {body!r}')
        for key, typ in (('code', int), ('status', str), ('message', str)):
            if not isinstance(err.get(key), typ):
                self.fail(where, f'REST error `{key}` missing or not {typ.__name__}')
        extra = set(err) - {'code', 'status', 'message', 'details'}
        if extra and self.conformance:
            self.fail(where, f'unexpected REST error members {sorted(extra)}')
        self.error_details(where, err.get('details', []))
        self.parsed['RestError'] += 1


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


def sse_event(raw: bytes):
    """One SSE event block -> (event name, data or None)."""
    name, data = 'message', []
    for line in raw.decode('utf-8').splitlines():
        if not line or line.startswith(':'):
            continue
        field, _, value = line.partition(':')
        value = value[1:] if value.startswith(' ') else value
        if field == 'data':
            data.append(value)
        elif field == 'event':
            name = value
    return name, '\n'.join(data) if data else None


class TeeStream(httpx.AsyncByteStream):
    """Passes an SSE body through unchanged, parsing each event strictly as it goes by."""

    def __init__(self, strict, inner, where, jsonrpc_id, is_jsonrpc):
        self.strict, self.inner, self.where, self.jsonrpc_id, self.is_jsonrpc = strict, inner, where, jsonrpc_id, is_jsonrpc
        self.buf = b''

    def check(self, raw):
        name, data = sse_event(raw)
        if data is None:
            return
        where = f'{self.where} (SSE event)'
        try:
            value = json.loads(data)
        except ValueError as e:
            return self.strict.fail(where, f'event data is not JSON: {e}')
        if self.is_jsonrpc:
            self.strict.jsonrpc_envelope(where, value, self.jsonrpc_id, StreamResponse)
        elif name == 'error' or (isinstance(value, dict) and 'error' in value):
            self.strict.rest_error(where, value)
        else:
            self.strict.parse(where, value, StreamResponse)

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
    """An httpx transport that checks every response with `strict` before the SDK sees it."""

    def __init__(self, strict):
        self.strict = strict
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request):
        response = await self.inner.handle_async_request(request)
        where = f'{request.method} {request.url.path}'
        jsonrpc_id, rpc_method = None, None
        if request.method == 'POST' and request.content:
            try:
                body = json.loads(request.content)
                if isinstance(body, dict) and 'jsonrpc' in body:
                    jsonrpc_id, rpc_method = body.get('id'), body.get('method')
                    where = f'JSON-RPC {rpc_method}'
            except ValueError:
                pass
        if response.headers.get('content-type', '').startswith('text/event-stream'):
            stream = TeeStream(self.strict, response.stream, where, jsonrpc_id, rpc_method is not None)
            return httpx.Response(response.status_code, headers=response.headers, stream=stream, extensions=response.extensions)
        raw = b''.join([chunk async for chunk in response.stream])
        await response.stream.aclose()
        self.strict.last_body = raw.decode(errors='replace')[:3000]
        self.check(where, request, response.status_code, raw, jsonrpc_id, rpc_method)
        return httpx.Response(
            response.status_code, headers=response.headers, stream=httpx.ByteStream(raw), extensions=response.extensions
        )

    def check(self, where, request, status, raw, jsonrpc_id, rpc_method):
        strict = self.strict
        if status == 304:
            return
        try:
            value = json.loads(raw) if raw.strip() else None
        except ValueError as e:
            return strict.fail(where, f'body is not JSON: {e}')
        if request.url.path.endswith('/.well-known/agent-card.json'):
            return strict.parse(where, without_v03_card_members(value), AgentCard)
        if rpc_method is not None:
            return strict.jsonrpc_envelope(where, value, jsonrpc_id, JSONRPC_RESULTS.get(rpc_method))
        if status >= 400:
            return strict.rest_error(where, value)
        if value is None:
            if strict.conformance:
                return strict.fail(where, f'HTTP {status} with an empty body')
            value = {}
        strict.parse(where, value, rest_result_type(request.method, request.url.path))


# ---------------------------------------------------------------------------------------------
# gRPC: the messages are protobuf on the wire; what is checked is what strict parsing checks
# for JSON that still applies (nothing the schema does not know) and the error statuses.

GRPC_RESULTS = {**JSONRPC_RESULTS, 'SendStreamingMessage': StreamResponse}
ERROR_DOMAIN = 'a2a-protocol.org'


def _method(details):
    """`/lf.a2a.v1.A2AService/GetTask` -> `GetTask`."""
    method = details.method.decode() if isinstance(details.method, bytes) else details.method
    return method.rsplit('/', 1)[-1]


def unknown_in(message, path='$'):
    """Where `message` holds fields or enum values its schema does not know, at any depth."""
    found = []
    unknown = UnknownFieldSet(message)
    if len(unknown):
        found.append(f'{path}: unknown field number(s) {sorted({f.field_number for f in unknown})}')
    for fd, value in message.ListFields():
        at = f'{path}.{fd.json_name}'
        entry = fd.message_type
        if entry is not None and entry.GetOptions().map_entry:
            value_fd = entry.fields_by_name['value']
            for key, v in value.items():
                if value_fd.message_type is not None:
                    found += unknown_in(v, f'{at}[{key!r}]')
                elif value_fd.enum_type is not None and v not in value_fd.enum_type.values_by_number:
                    found.append(f'{at}[{key!r}]: enum value {v} not in {value_fd.enum_type.full_name}')
            continue
        values = value if fd.is_repeated else [value]
        for i, v in enumerate(values):
            item = f'{at}[{i}]' if fd.is_repeated else at
            if fd.message_type is not None:
                found += unknown_in(v, item)
            elif fd.enum_type is not None and v not in fd.enum_type.values_by_number:
                found.append(f'{item}: enum value {v} not in {fd.enum_type.full_name}')
    return found


def grpc_message(strict, where, method, message):
    """One response message of a gRPC call."""
    want = GRPC_RESULTS.get(method)
    if want is None:
        strict.fail(where, 'no result type known for this method')
    elif not isinstance(message, want):
        strict.fail(where, f'decoded as {type(message).__name__}, not {want.__name__}')
    for problem in unknown_in(message):
        strict.fail(where, problem)
    strict.parsed[message.DESCRIPTOR.name] += 1
    strict.last_body = json.dumps(MessageToDict(message))[:3000]


def grpc_status(strict, where, err):
    """A call ended with an error status: its `google.rpc.Status` in
    `grpc-status-details-bin`, checked, and kept (as JSON) in `strict.last_body`."""
    bins = [v for k, v in (err.trailing_metadata() or ()) if k == 'grpc-status-details-bin']
    strict.last_body = json.dumps({'grpc-status': err.code().name, 'grpc-message': err.details()})
    if len(bins) != 1:
        return strict.fail(where, f'{err.code().name} with {len(bins)} grpc-status-details-bin (want 1): {err.details()!r}')
    status = status_pb2.Status()
    try:
        status.ParseFromString(bins[0])
    except Exception as e:  # DecodeError
        return strict.fail(where, f'grpc-status-details-bin is not a google.rpc.Status: {e}')
    for problem in unknown_in(status):
        strict.fail(where, f'google.rpc.Status {problem}')
    if status.code != err.code().value[0]:
        strict.fail(where, f'google.rpc.Status code {status.code} is not the call\'s {err.code().name}')
    if status.message != err.details():
        strict.fail(where, f'google.rpc.Status message {status.message!r} is not grpc-message {err.details()!r}')
    infos = 0
    details = []
    for any_ in status.details:
        for name, typ in (('google.rpc.ErrorInfo', error_details_pb2.ErrorInfo), ('google.rpc.BadRequest', error_details_pb2.BadRequest)):
            if strict.is_type(any_.type_url, name):
                detail = typ()
                try:
                    detail.ParseFromString(any_.value)
                except Exception as e:  # DecodeError
                    strict.fail(where, f'{name} detail does not decode: {e}')
                    break
                for problem in unknown_in(detail):
                    strict.fail(where, f'{name} {problem}')
                strict.parsed[typ.DESCRIPTOR.name] += 1
                if typ is error_details_pb2.ErrorInfo:
                    infos += 1
                    if strict.conformance and detail.domain != ERROR_DOMAIN:
                        strict.fail(where, f'ErrorInfo domain {detail.domain!r}, not {ERROR_DOMAIN!r}')
                details.append({'@type': any_.type_url, **MessageToDict(detail)})
                break
        else:
            details.append({'@type': any_.type_url})
    if infos == 0 and strict.conformance:
        strict.fail(where, 'error status without a google.rpc.ErrorInfo detail (clients map errors by its reason)')
    strict.parsed['GrpcStatus'] += 1
    strict.last_body = json.dumps({'code': status.code, 'message': status.message, 'details': details})[:3000]


class _StrictUnary(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, strict):
        self.strict = strict

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        method = _method(client_call_details)
        where = f'gRPC {method}'
        call = await continuation(client_call_details, request)
        try:
            response = await call
        except grpc.aio.AioRpcError as e:
            grpc_status(self.strict, where, e)
        else:
            grpc_message(self.strict, where, method, response)
        # Done: awaiting it again gives the caller the same response or error.
        return call


class _StrictStream(grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, strict):
        self.strict = strict

    async def intercept_unary_stream(self, continuation, client_call_details, request):
        method = _method(client_call_details)
        where = f'gRPC {method} (stream message)'
        call = await continuation(client_call_details, request)
        strict = self.strict

        async def responses():
            try:
                async for message in call:
                    grpc_message(strict, where, method, message)
                    yield message
            except grpc.aio.AioRpcError as e:
                grpc_status(strict, f'gRPC {method}', e)
                raise

        return responses()


def grpc_interceptors(strict):
    """Channel interceptors checking every gRPC response and error status with `strict`."""
    return [_StrictUnary(strict), _StrictStream(strict)]
