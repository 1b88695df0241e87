// The official JS client (@a2a-js/sdk 1.3.0) with its credential support against an a2a-kit
// agent that takes API keys or bearer tokens, for tests/interop_conformance.rs.
//
// Usage: node js_auth_client.mjs BASE_URL VALUE [HEADER]   (HEADER defaults to X-API-Key;
//        for a bearer token: VALUE "Bearer <jwt>", HEADER Authorization)
//
// Reads the public card with the SDK's resolver (its securitySchemes and
// securityRequirements), then over JSON-RPC and HTTP+JSON: a client whose fetch carries the
// key (createAuthenticatingFetchWithRetry) sends a message; one without credentials is refused.
// Prints one JSON object on the last line of stdout.

import { randomUUID } from 'node:crypto';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const [base, key, header = 'X-API-Key'] = process.argv.slice(2);

const withKey = createAuthenticatingFetchWithRetry(fetch, {
  headers: async () => ({ [header]: key }),
  shouldRetryWithHeaders: async () => undefined,
});

function factory(binding, fetchImpl) {
  const transports = fetchImpl
    ? [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })]
    : undefined;
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      ...(transports ? { transports } : {}),
      preferredTransports: [binding],
    }),
  );
}

async function send(binding, fetchImpl) {
  try {
    const client = await factory(binding, fetchImpl).createFromUrl(base);
    const message = {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: 'hi' } }],
      metadata: { skillId: 'echo' },
    };
    const r = await client.sendMessage({ message });
    return { state: r && 'status' in r ? TaskState[r.status.state] : null };
  } catch (e) {
    return { exception: e?.name, message: String(e?.message ?? e).slice(0, 300) };
  }
}

const card = await new DefaultAgentCardResolver().resolve(base);
const out = {
  card: {
    schemes: card.securitySchemes,
    requirements: card.securityRequirements,
  },
  bindings: {},
};
for (const binding of ['JSONRPC', 'HTTP+JSON']) {
  out.bindings[binding] = { with_key: await send(binding, withKey), without_key: await send(binding) };
}
console.log(JSON.stringify(out));
