"""The official Python client of A2A v0.3 (a2a-sdk 0.3.26, pinned, with its `grpc` extra)
over gRPC against an a2a-kit agent, for tests/grpc_v03.rs.

Usage: python py_grpc_client.py HOST:PORT

HOST:PORT serves a2a-kit's test agent (tests/support.rs, `TestAgent`: a skill per message
metadata `skillId`) with push notifications, on plain HTTP/2. Every call goes through the
SDK's gRPC transport (`a2a.client.transports.grpc.GrpcTransport`, over a `grpc.aio` channel),
or its `Client` from `ClientFactory` choosing gRPC from the card; what 0.3.26's transport has
no method for (the push config list and delete) goes through the SDK's generated stub
(`a2a.grpc.a2a_pb2_grpc.A2AServiceStub`) on the same channel. Errors are read as the SDK's
clients get them: `grpc.aio.AioRpcError`, its code and details.

Prints ONE JSON line on stdout, {"check name": "ok" | "failure description", ...}, then, when
every check passed, `all v0.3 gRPC checks passed`; exits 1 otherwise.
"""

import asyncio
import base64
import json
import sys
import traceback
import uuid

import grpc

from a2a import types as t
from a2a.client import ClientConfig, ClientFactory
from a2a.client.transports.grpc import GrpcTransport
from a2a.grpc import a2a_pb2, a2a_pb2_grpc


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)


def message(skill, *parts):
    return t.Message(
        role=t.Role.user,
        message_id=str(uuid.uuid4()),
        parts=[t.Part(root=p) for p in parts],
        metadata={'skillId': skill},
    )


def text(value):
    return t.TextPart(text=value)


def params(msg, blocking=True):
    return t.MessageSendParams(
        message=msg, configuration=t.MessageSendConfiguration(blocking=blocking)
    )


async def expect_rpc_error(call, code, prefix):
    try:
        await call
    except grpc.aio.AioRpcError as e:
        check(e.code() == code, f'expected {code}, got {e.code()}: {e.details()}')
        check(
            (e.details() or '').startswith(prefix),
            f'expected a message starting {prefix!r}, got {e.details()!r}',
        )
        return e
    raise CheckFailed(f'expected {code}, the call succeeded')


class Checks:
    def __init__(self, authority):
        self.authority = authority
        self.channel = grpc.aio.insecure_channel(authority)
        self.stub = a2a_pb2_grpc.A2AServiceStub(self.channel)
        self.card = None
        self.transport = None

    async def card_over_grpc(self):
        # No card yet: the transport asks GetAgentCard for it.
        card = await GrpcTransport(self.channel, None).get_card()
        check(card.protocol_version == '0.3.0', f'protocolVersion {card.protocol_version}')
        check(card.name, 'the card has a name')
        grpc_urls = [
            i.url for i in card.additional_interfaces or [] if i.transport == 'GRPC'
        ]
        check(grpc_urls == [self.authority], f'GRPC interfaces {grpc_urls}')
        check(card.capabilities.streaming, 'streaming')
        check(card.capabilities.push_notifications, 'push notifications')
        check(any(s.id == 'echo' for s in card.skills), 'the echo skill')
        self.card = card
        self.transport = GrpcTransport(self.channel, card)

    async def send_blocking(self):
        task = await self.transport.send_message(params(message('echo', text('hi over grpc'))))
        check(isinstance(task, t.Task), f'a task, not {type(task)}')
        check(task.status.state == t.TaskState.completed, f'state {task.status.state}')
        check(
            task.artifacts[0].parts[0].root.text == 'hi over grpc',
            f'artifact {task.artifacts}',
        )
        check(task.history[0].parts[0].root.text == 'hi over grpc', 'the history')
        got = await self.transport.get_task(t.TaskQueryParams(id=task.id))
        check(got.id == task.id and got.status.state == t.TaskState.completed, 'GetTask')
        check(got.context_id == task.context_id, 'the context')

    async def send_file_and_data(self):
        file = t.FilePart(
            file=t.FileWithBytes(
                bytes=base64.b64encode(b'hello file').decode(), mime_type='text/plain'
            )
        )
        data = t.DataPart(data={'k': 'v', 'n': 3})
        task = await self.transport.send_message(
            params(message('echo', text('parts'), file, data))
        )
        parts = task.history[0].parts
        check(len(parts) == 3, f'three parts, not {parts}')
        got_file = parts[1].root.file
        check(
            base64.b64decode(got_file.bytes) == b'hello file',
            f'the file came back as {got_file.bytes!r}',
        )
        check(got_file.mime_type == 'text/plain', f'mime type {got_file.mime_type}')
        check(parts[2].root.data == {'k': 'v', 'n': 3}, f'data {parts[2].root.data}')

    async def send_returning_at_once(self):
        task = await self.transport.send_message(
            params(message('slow', text('20000')), blocking=False)
        )
        check(
            task.status.state in (t.TaskState.submitted, t.TaskState.working),
            f'state {task.status.state}',
        )
        canceled = await self.transport.cancel_task(t.TaskIdParams(id=task.id))
        check(canceled.status.state == t.TaskState.canceled, f'{canceled.status.state}')

    async def direct_message(self):
        reply = await self.transport.send_message(params(message('direct', text('hello'))))
        check(isinstance(reply, t.Message), f'a message, not {type(reply)}')
        check(reply.role == t.Role.agent, f'role {reply.role}')

    async def stream(self):
        events = [
            e
            async for e in self.transport.send_message_streaming(
                params(message('chunks', text('3')))
            )
        ]
        check(isinstance(events[0], t.Task), f'first {events[0]}')
        chunks = [e for e in events if isinstance(e, t.TaskArtifactUpdateEvent)]
        check(len(chunks) == 3, f'{len(chunks)} chunks')
        check(chunks[2].last_chunk, 'the last chunk says so')
        last = events[-1]
        check(isinstance(last, t.TaskStatusUpdateEvent), f'last {last}')
        check(last.status.state == t.TaskState.completed, f'{last.status.state}')
        check(last.final, 'the last update is final')
        updates = [e for e in events if isinstance(e, t.TaskStatusUpdateEvent)]
        check(not any(u.final for u in updates[:-1]), 'only the last is final')

    async def resubscribe_and_cancel(self):
        task = await self.transport.send_message(
            params(message('slow', text('20000')), blocking=False)
        )
        events = []

        async def follow():
            async for e in self.transport.resubscribe(t.TaskIdParams(id=task.id)):
                events.append(e)

        following = asyncio.create_task(follow())
        for _ in range(100):
            if events:
                break
            await asyncio.sleep(0.05)
        check(events and isinstance(events[0], t.Task), f'a task first, got {events}')
        await self.transport.cancel_task(t.TaskIdParams(id=task.id))
        await asyncio.wait_for(following, 20)
        last = events[-1]
        check(
            isinstance(last, t.TaskStatusUpdateEvent)
            and last.status.state == t.TaskState.canceled
            and last.final,
            f'ends with the final CANCELED update, not {last}',
        )
        # A task that has ended: the task, and the stream closes.
        after = [e async for e in self.transport.resubscribe(t.TaskIdParams(id=task.id))]
        check(
            len(after) == 1 and isinstance(after[0], t.Task),
            f'the task alone, not {after}',
        )
        check(after[0].status.state == t.TaskState.canceled, f'{after[0].status}')
        # Canceling again: v0.3's code and message.
        await expect_rpc_error(
            self.transport.cancel_task(t.TaskIdParams(id=task.id)),
            grpc.StatusCode.UNIMPLEMENTED,
            'TaskNotCancelableError: ',
        )

    async def push_configs(self):
        task = await self.transport.send_message(
            params(message('slow', text('20000')), blocking=False)
        )
        config = t.TaskPushNotificationConfig(
            task_id=task.id,
            push_notification_config=t.PushNotificationConfig(
                id='hook-1',
                url='https://hooks.example/a2a',
                token='tok',
                authentication=t.PushNotificationAuthenticationInfo(
                    schemes=['Bearer'], credentials='secret'
                ),
            ),
        )
        created = await self.transport.set_task_callback(config)
        check(created.task_id == task.id, f'task {created.task_id}')
        check(created.push_notification_config.id == 'hook-1', f'{created}')
        check(created.push_notification_config.token == 'tok', 'its creator sees it')
        got = await self.transport.get_task_callback(
            t.GetTaskPushNotificationConfigParams(
                id=task.id, push_notification_config_id='hook-1'
            )
        )
        check(got.push_notification_config.url == 'https://hooks.example/a2a', f'{got}')
        check(not got.push_notification_config.token, 'credentials are write-only')
        check(
            got.push_notification_config.authentication.schemes == ['Bearer'],
            f'{got.push_notification_config.authentication}',
        )
        listed = await self.stub.ListTaskPushNotificationConfig(
            a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f'tasks/{task.id}')
        )
        check(
            [c.name for c in listed.configs]
            == [f'tasks/{task.id}/pushNotificationConfigs/hook-1'],
            f'{listed}',
        )
        await self.stub.DeleteTaskPushNotificationConfig(
            a2a_pb2.DeleteTaskPushNotificationConfigRequest(
                name=f'tasks/{task.id}/pushNotificationConfigs/hook-1'
            )
        )
        await expect_rpc_error(
            self.transport.get_task_callback(
                t.GetTaskPushNotificationConfigParams(
                    id=task.id, push_notification_config_id='hook-1'
                )
            ),
            grpc.StatusCode.NOT_FOUND,
            'TaskNotFoundError: ',
        )
        await self.transport.cancel_task(t.TaskIdParams(id=task.id))

    async def errors(self):
        await expect_rpc_error(
            self.transport.get_task(t.TaskQueryParams(id='no-such-task')),
            grpc.StatusCode.NOT_FOUND,
            'TaskNotFoundError: ',
        )
        e = await expect_rpc_error(
            self.stub.GetTask(a2a_pb2.GetTaskRequest(name='no-such-task')),
            grpc.StatusCode.INVALID_ARGUMENT,
            'InvalidParamsError: ',
        )
        check('`name`' in e.details(), f'names the field: {e.details()}')
        e = await expect_rpc_error(
            self.transport.send_message(params(message('slow', text('not a number')))),
            grpc.StatusCode.INVALID_ARGUMENT,
            'InvalidParamsError: ',
        )
        check('`message.content[0].text`' in e.details(), f'{e.details()}')

    async def client_from_the_card(self):
        # The SDK's own client, choosing gRPC from the card it read over gRPC.
        config = ClientConfig(
            streaming=False,
            supported_transports=[t.TransportProtocol.grpc],
            grpc_channel_factory=grpc.aio.insecure_channel,
        )
        client = ClientFactory(config).create(self.card)
        events = [e async for e in client.send_message(message('echo', text('via the client')))]
        task, _ = events[-1]
        check(task.status.state == t.TaskState.completed, f'{task.status.state}')
        check(task.artifacts[0].parts[0].root.text == 'via the client', f'{task.artifacts}')
        await client.close()


async def main(authority):
    checks = Checks(authority)
    names = [
        'card_over_grpc',
        'send_blocking',
        'send_file_and_data',
        'send_returning_at_once',
        'direct_message',
        'stream',
        'resubscribe_and_cancel',
        'push_configs',
        'errors',
        'client_from_the_card',
    ]
    results = {}
    for name in names:
        if checks.transport is None and name != 'card_over_grpc':
            results[name] = 'skipped: no card'
            continue
        try:
            await asyncio.wait_for(getattr(checks, name)(), 60)
            results[name] = 'ok'
        except CheckFailed as e:
            results[name] = str(e)
        except Exception:  # noqa: BLE001 - every failure is reported by name
            results[name] = traceback.format_exc()
    await checks.channel.close()
    print(json.dumps(results))
    if all(r == 'ok' for r in results.values()):
        print('all v0.3 gRPC checks passed')
        return 0
    return 1


if __name__ == '__main__':
    sys.exit(asyncio.run(main(sys.argv[1])))
