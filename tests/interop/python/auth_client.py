"""The official Python client (a2a-sdk 1.3.0) with its credential support against an a2a-kit
agent that takes API keys or bearer tokens, for tests/interop_python_client.rs.

Usage: python auth_client.py BASE_URL CREDENTIAL

CREDENTIAL is what the SDK's CredentialService returns for the card's scheme: an API key, or
a JWT the AuthInterceptor sends as `Authorization: Bearer ...`.

Reads the public card (its securitySchemes and securityRequirements must parse into the
SDK's types), then over JSON-RPC and HTTP+JSON: a client whose AuthInterceptor finds the key
for the card's scheme sends a message; one without credentials is refused.

Prints one JSON object on the last line of stdout:
  {"card": {...}, "bindings": {"JSONRPC": {"with_key": ..., "without_key": ...}, ...}}
"""

import asyncio
import json
import sys
import uuid

import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.auth.credentials import CredentialService
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState


class OneKey(CredentialService):
    """The credential for every scheme the card names (the agent has one)."""

    def __init__(self, key):
        self.key = key

    async def get_credentials(self, security_scheme_name, context):
        return self.key


def msg(text):
    m = Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)])
    m.metadata.update({'skillId': 'echo'})
    return m


async def send(card, hx, binding, interceptors):
    cfg = ClientConfig(httpx_client=hx, supported_protocol_bindings=[binding], streaming=False)
    client = ClientFactory(cfg).create(card, interceptors)
    try:
        evs = [ev async for ev in client.send_message(SendMessageRequest(message=msg('hi')))]
        return {'state': TaskState.Name(evs[0].task.status.state)}
    except Exception as e:  # recorded, the Rust test asserts on it
        return {'exception': type(e).__name__, 'message': str(e)[:300]}


async def main():
    base, key = sys.argv[1], sys.argv[2]
    async with httpx.AsyncClient(timeout=60) as hx:
        card = await A2ACardResolver(hx, base).get_agent_card()
        schemes = {}
        for name, s in card.security_schemes.items():
            kind = s.WhichOneof('scheme')
            if kind == 'api_key_security_scheme':
                fields = {
                    'location': s.api_key_security_scheme.location,
                    'name': s.api_key_security_scheme.name,
                }
            elif kind == 'http_auth_security_scheme':
                fields = {
                    'scheme': s.http_auth_security_scheme.scheme,
                    'bearer_format': s.http_auth_security_scheme.bearer_format,
                }
            else:
                fields = {}
            schemes[name] = {'kind': kind, **fields}
        requirements = [sorted(r.schemes.keys()) for r in card.security_requirements]
        out = {'card': {'schemes': schemes, 'requirements': requirements}, 'bindings': {}}
        for binding in ['JSONRPC', 'HTTP+JSON']:
            out['bindings'][binding] = {
                'with_key': await send(card, hx, binding, [AuthInterceptor(OneKey(key))]),
                'without_key': await send(card, hx, binding, []),
            }
    print(json.dumps(out))


if __name__ == '__main__':
    asyncio.run(main())
