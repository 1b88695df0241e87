"""The official Python client (a2a-sdk 1.x) books a flight with the travel agent's
`book-flight` skill: a data part built from a Python dict, as users write it. The SDK sends
it as protobuf's `Value`, so `"passengers": 2` travels as `2.0`.

Usage: data_client.py BASE_URL. Prints a JSON summary as its last line.
"""

import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import json_format, struct_pb2

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest


def flight(passengers):
    data = json_format.ParseDict(
        {'from': 'LIS', 'to': 'AMS', 'date': '2026-12-01', 'passengers': passengers},
        struct_pb2.Value(),
    )
    m = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(data=data)])
    m.metadata.update({'skillId': 'book-flight'})
    return m


async def book(client, passengers):
    try:
        events = [ev async for ev in client.send_message(SendMessageRequest(message=flight(passengers)))]
    except Exception as e:  # the Rust test asserts on it
        return {'exception': type(e).__name__, 'message': str(e)[:300]}
    task = events[-1].task
    parts = [p for a in task.artifacts for p in a.parts]
    return {
        'state': task.status.state,
        'data': [json_format.MessageToDict(p.data) for p in parts if p.HasField('data')],
    }


async def main(base):
    out = {}
    async with httpx.AsyncClient(timeout=60) as hx:
        card = await A2ACardResolver(hx, base).get_agent_card()
        for binding in ['JSONRPC', 'HTTP+JSON']:
            cfg = ClientConfig(httpx_client=hx, supported_protocol_bindings=[binding], streaming=False)
            client = ClientFactory(cfg).create(card)
            out[binding] = {'two': await book(client, 2), 'fraction': await book(client, 2.5)}
    print(json.dumps(out))


if __name__ == '__main__':
    asyncio.run(main(sys.argv[1]))
