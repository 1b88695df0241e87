"""A chat UI's view of a streamed answer, with the official a2a-sdk client.

Sends one message (SendStreamingMessage) to the agent at argv[1] and accumulates every text
part it receives, as a chat UI that shows "what the agent said" does: the status messages'
text parts and the artifact chunks' text parts, in order. Progress that travels as a status
indicator (a data part) adds nothing. Prints a JSON summary: the accumulated text, the
artifact text alone, the indicator texts, and the final state.
"""

import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import json_format

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState


async def main(base, text):
    async with httpx.AsyncClient(timeout=60) as hx:
        card = await A2ACardResolver(hx, base).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=hx, streaming=True)).create(card)
        message = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)])
        shown, answer, indicators, final = '', '', [], None
        async for ev in client.send_message(SendMessageRequest(message=message)):
            kind = ev.WhichOneof('payload')
            if kind == 'status_update':
                status = ev.status_update.status
                final = TaskState.Name(status.state)
                for p in status.message.parts:
                    if p.WhichOneof('content') == 'text':
                        shown += p.text
                    elif p.WhichOneof('content') == 'data':
                        data = json_format.MessageToDict(p.data)
                        if data.get('type') == 'status-indicator':
                            indicators.append(data.get('text'))
            elif kind == 'artifact_update':
                for p in ev.artifact_update.artifact.parts:
                    if p.WhichOneof('content') == 'text':
                        shown += p.text
                        answer += p.text
            elif kind == 'task':
                final = TaskState.Name(ev.task.status.state)
        print(json.dumps({'shown': shown, 'answer': answer, 'indicators': indicators, 'final': final}))


asyncio.run(main(sys.argv[1], sys.argv[2]))
