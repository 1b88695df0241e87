// The official JS client (@a2a-js/sdk 1.3.0) with its credential support against an a2a-kit
// agent that takes API keys or bearer tokens, for tests/interop_conformance.rs.
//
// Usage: node js_auth_client.mjs BASE_URL VALUE [HEADER]   (HEADER defaults to X-API-Key;
//        for a bearer token: VALUE "Bearer <jwt>", HEADER Authorization)
//
// Reads the public card with the SDK's resolver (its securitySchemes and
// securityRequirements), then over JSON-RPC and HTTP+JSON: a client whose fetch carries the
// key (createAuthenticatingFetchWithRetry) sends a message; one without credentials is refused.
// Over gRPC (the SDK's GrpcTransportFactory) there is no fetch to wrap: the key goes as call
// metadata, set by an SDK `CallInterceptor` as a service parameter (the SDK's transports send
// service parameters as HTTP headers or gRPC metadata alike); one without it is refused.
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
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { Role, TaskState } from '@a2a-js/sdk';

const [base, key, header = 'X-API-Key'] = process.argv.slice(2);

const withKey = createAuthenticatingFetchWithRetry(fetch, {
  headers: async () => ({ [header]: key }),
  shouldRetryWithHeaders: async () => undefined,
});

// Over gRPC: the key as a service parameter of every call (gRPC metadata on the wire).
const keyInterceptor = {
  async before(args) {
    args.options.serviceParameters[header] = key;
  },
  async after() {},
};

function factory(binding, withCredentials) {
  const transports = [new GrpcTransportFactory()];
  if (withCredentials) {
    transports.push(new JsonRpcTransportFactory({ fetchImpl: withKey }), new RestTransportFactory({ fetchImpl: withKey }));
  }
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports,
      ...(withCredentials && binding === 'GRPC' ? { clientConfig: { interceptors: [keyInterceptor] } } : {}),
      preferredTransports: [binding],
    }),
  );
}

async function send(binding, withCredentials) {
  try {
    const client = await factory(binding, withCredentials).createFromUrl(base);
    if (client.transport.protocolName !== binding) throw new Error(`the SDK picked ${client.transport.protocolName}, not ${binding}`);
    // Every field present, as the SDK's TypeScript types have it (its gRPC encoder reads each).
    const message = {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: 'hi' }, metadata: undefined, filename: '', mediaType: '' }],
      metadata: { skillId: 'echo' },
      extensions: [],
      referenceTaskIds: [],
    };
    const r = await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined });
    return { state: r && 'status' in r ? TaskState[r.status.state] : null };
  } catch (e) {
    return { exception: e?.name, message: String(e?.message ?? e).slice(0, 300), ...(e?.status !== undefined ? { status: e.status } : {}) };
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
for (const binding of ['JSONRPC', 'HTTP+JSON', 'GRPC']) {
  out.bindings[binding] = { with_key: await send(binding, true), without_key: await send(binding, false) };
}
console.log(JSON.stringify(out));
