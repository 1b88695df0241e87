// The official JS client (@a2a-js/sdk, pinned in js/package.json) against the a2a-kit
// conformance agent, for tests/interop_conformance.rs.
//
// Usage: node js_client.mjs BASE_URL (jsonrpc|rest|grpc) WEBHOOK_URL [--no-streaming]
// The Rust test copies this file into the directory where it installed js/package.json with
// `npm ci` (under the target directory), so the SDK resolves from that node_modules.
//
// Same scenario as py_client.py, through the SDK's client API (`ClientFactory`, `Client`).
// The main run expects the agent started with `--push --extended-card`; `--no-streaming`
// expects it started with `--no-streaming` only and checks the "not supported" errors, using a
// client built from the card with its capabilities forced on (with the real card the SDK falls
// back to a blocking send, or throws for push configs, without asking the server). The webhook
// receiver: `POST {WEBHOOK_URL}/hook/KEY` is recorded, `GET {WEBHOOK_URL}/received/KEY` lists
// `[{"token", "contentType", "body"}]`.
//
// `grpc` is the SDK's own gRPC transport (`GrpcTransportFactory` from `@a2a-js/sdk/client/grpc`,
// on @grpc/grpc-js), picked by the SDK from the card's `GRPC` interface (`host:port`, the
// agent's listener speaking h2c). The card itself is read over HTTP whatever the binding (A2A
// has no gRPC method for the public card), and push deliveries are HTTP POSTs from the agent.
// A grpc-js interceptor records each call as the fetch hook records HTTP exchanges: an error
// status's `grpc-status-details-bin` (a google.rpc.Status) is decoded, so a check can tell an
// error the server answered with (its ErrorInfo reason) from one the SDK raised by itself.
//
// Prints ONE JSON line on stdout:
//   {"client": "js", "binding", "mode", "checks": [{"check", "ok", "detail"}, ...]}

import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { Role, TaskState } from '@a2a-js/sdk';

const BINDINGS = { jsonrpc: 'JSONRPC', rest: 'HTTP+JSON', grpc: 'GRPC' };
const [base, binding, webhookArg, ...rest] = process.argv.slice(2);
const webhook = (webhookArg ?? '').replace(/\/$/, '');
const noStreaming = rest.includes('--no-streaming');
if (!BINDINGS[binding]) {
  console.error(`binding must be one of ${Object.keys(BINDINGS)}`);
  process.exit(2);
}

// The last exchanges on the wire, shown with a failed check.
const wire = [];
let lastBody = ''; // the last non-SSE response body
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, init = {}) => {
  const entry = { request: `${init.method ?? 'GET'} ${url}`, body: typeof init.body === 'string' ? init.body.slice(0, 400) : undefined };
  wire.push(entry);
  if (wire.length > 6) wire.shift();
  const res = await realFetch(url, init);
  entry.status = res.status;
  entry.contentType = res.headers.get('content-type');
  if (!entry.contentType?.startsWith('text/event-stream')) {
    lastBody = await res.clone().text();
    entry.response = lastBody.slice(0, 600);
  }
  return res;
};

// The fields of a protobuf message as [fieldNo, value] (length-delimited values as bytes).
function fields(bytes) {
  const reader = new BinaryReader(bytes);
  const out = [];
  while (reader.pos < reader.len) {
    const [no, type] = reader.tag();
    if (type === 0) out.push([no, reader.int32()]);
    else if (type === 2) out.push([no, reader.bytes()]);
    else reader.skip(type, no);
  }
  return out;
}
const utf8 = (b) => Buffer.from(b).toString('utf8');
// google.rpc.Status {code = 1, message = 2, details = 3 (Any {type_url = 1, value = 2})}, with
// its google.rpc.ErrorInfo {reason = 1, domain = 2, metadata = 3 (map<string, string>)} decoded.
function decodeStatus(bytes) {
  const status = { code: 0, message: '', details: [] };
  for (const [no, v] of fields(bytes)) {
    if (no === 1) status.code = v;
    else if (no === 2) status.message = utf8(v);
    else if (no === 3) {
      const any = Object.fromEntries(fields(v));
      const detail = { '@type': any[1] ? utf8(any[1]) : '' };
      if (detail['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo') {
        detail.metadata = {};
        for (const [n, x] of fields(any[2] ?? new Uint8Array())) {
          if (n === 1) detail.reason = utf8(x);
          else if (n === 2) detail.domain = utf8(x);
          else if (n === 3) {
            const entry = Object.fromEntries(fields(x));
            detail.metadata[utf8(entry[1] ?? [])] = utf8(entry[2] ?? []);
          }
        }
      }
      status.details.push(detail);
    }
  }
  return status;
}
const json = (v) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x));
// Records each gRPC call in `wire`; a unary answer, or any error status (its
// grpc-status-details-bin decoded), becomes `lastBody`, as an HTTP body does.
const recordGrpc = (options, nextCall) => {
  const entry = { request: `gRPC ${options.method_definition.path}`, messages: 0 };
  const streaming = options.method_definition.responseStream;
  return new grpc.InterceptingCall(nextCall(options), {
    start(metadata, _listener, next) {
      wire.push(entry);
      if (wire.length > 6) wire.shift();
      next(metadata, {
        onReceiveMessage(message, nextMessage) {
          entry.messages += 1;
          if (!streaming) {
            lastBody = json(message);
            entry.response = lastBody.slice(0, 600);
          }
          nextMessage(message);
        },
        onReceiveStatus(status, nextStatus) {
          entry.status = grpc.status[status.code];
          if (status.code !== grpc.status.OK) {
            const bin = status.metadata?.get('grpc-status-details-bin') ?? [];
            lastBody = json(bin.length
              ? decodeStatus(new Uint8Array(bin[0]))
              : { 'grpc-status': entry.status, 'grpc-message': status.details, 'grpc-status-details-bin': 'absent' });
            entry.response = lastBody.slice(0, 600);
          }
          nextStatus(status);
        },
      });
    },
  });
};

class CheckFailed extends Error {
  constructor(detail) {
    super('check failed');
    this.detail = detail;
  }
}

const expect = (cond, expected, ctx = {}) => {
  if (!cond) throw new CheckFailed({ expected, ...ctx });
};
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const stateName = (s) => TaskState[s];
// Requests as the SDK's TypeScript types have them, every field present: its types (ts-proto's)
// make them required, and its gRPC encoder reads each one (the JSON writers skip a missing
// field, the protobuf writer fails on it: "message.extensions is not iterable").
const msg = (prefix, text = 'hi', extra = {}) => ({
  messageId: `${prefix}-${randomUUID()}`,
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
  ...extra,
});
const req = {
  send: (message, configuration) => ({
    tenant: '',
    message,
    configuration: configuration && { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false, ...configuration },
    metadata: undefined,
  }),
  get: (id, extra = {}) => ({ tenant: '', id, ...extra }),
  cancel: (id) => ({ tenant: '', id, metadata: undefined }),
  subscribe: (id) => ({ tenant: '', id }),
  pushConfig: (config) => ({ tenant: '', id: '', taskId: '', url: '', token: '', authentication: undefined, ...config }),
  pushRef: (taskId, id) => ({ tenant: '', taskId, id }),
  pushList: (taskId) => ({ tenant: '', taskId, pageSize: 0, pageToken: '' }),
};
const texts = (parts) => (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const isTask = (r) => r && typeof r === 'object' && 'status' in r;
const kinds = (evs) => evs.map((e) => e.payload?.$case);
const finalState = (ev) => {
  const p = ev.payload;
  if (p?.$case === 'statusUpdate') return stateName(p.value.status?.state);
  if (p?.$case === 'task') return stateName(p.value.status?.state);
  return p?.$case;
};
const collect = async (it) => {
  const out = [];
  for await (const ev of it) out.push(ev);
  return out;
};
const errorName = async (thunk) => {
  lastBody = '';
  try {
    const r = thunk();
    if (r && typeof r[Symbol.asyncIterator] === 'function') await collect(r);
    else await r;
  } catch (e) {
    return [e?.name ?? String(e), String(e?.message ?? e).slice(0, 300)];
  }
  return [null, null];
};
// A ListTasksRequest with every field its TypeScript type requires. The SDK's JSON-RPC
// serializer writes a missing `status` as "UNRECOGNIZED" (ts-proto's `taskStateToJSON(undefined)`),
// which a server rightly rejects as an unknown enum value; typed callers always set it.
const listReq = (over) => ({
  tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined, ...over,
});
// `got` ([name, message]) is the SDK's `want` error, raised for the server's answer carrying
// ErrorInfo `reason` (not by the SDK on its own: it throws some of the same classes itself).
const expectError = ([name, message], want, reason) => {
  expect(name === want, want, { got: name, message, response: lastBody.slice(0, 600) });
  expect(lastBody.includes(`"${reason}"`), `the server answered with reason ${reason}`, { response: lastBody.slice(0, 600) });
  return { exception: name };
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const checks = [];
async function check(name, fn) {
  const start = Date.now();
  const mark = wire.length;
  try {
    checks.push({ check: name, ok: true, detail: (await fn()) ?? null });
  } catch (e) {
    const detail = e instanceof CheckFailed
      ? e.detail
      : { exception: e?.name, message: String(e?.message ?? e).slice(0, 500), stack: String(e?.stack ?? '').slice(0, 1200) };
    detail.wire = wire.slice(Math.max(0, mark - 1));
    checks.push({ check: name, ok: false, detail });
  }
  checks[checks.length - 1].seconds = (Date.now() - start) / 1000;
}

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    // JSON-RPC and HTTP+JSON are the defaults; gRPC is added (insecure credentials by default).
    transports: [new GrpcTransportFactory({ grpcCallOptions: { interceptors: [recordGrpc] } })],
    preferredTransports: [BINDINGS[binding]],
  }),
);

async function sendTask(client, m, configuration) {
  const r = await client.sendMessage(req.send(m, configuration));
  expect(isTask(r), 'a Task', { got: r });
  return r;
}

async function main() {
  let client;
  await check('card', async () => {
    client = await factory.createFromUrl(base);
    const card = client.agentCard;
    const caps = card.capabilities ?? {};
    const detail = {
      name: card.name,
      interfaces: card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion, i.url]),
      capabilities: caps,
      transport: client.transport.constructor.name,
      protocolVersion: client.protocolVersion,
    };
    expect(card.supportedInterfaces.some((i) => i.protocolBinding === BINDINGS[binding]), `an interface for ${BINDINGS[binding]}`, detail);
    expect(client.transport.protocolName === BINDINGS[binding], `the SDK picks ${BINDINGS[binding]}`, { ...detail, got: client.transport.protocolName });
    expect(client.protocolVersion === '1.0', 'protocol version 1.0', detail);
    if (noStreaming) expect(!caps.streaming && !caps.pushNotifications && !caps.extendedAgentCard, 'capabilities off', detail);
    else expect(caps.streaming && caps.pushNotifications && caps.extendedAgentCard, 'capabilities on', detail);
    if (binding === 'grpc') {
      // The card is read over HTTP (no gRPC method serves the public card); the GRPC
      // interface names the same listener as host:port, without a scheme.
      detail.cardFetch = 'HTTP GET /.well-known/agent-card.json (the public card has no gRPC method)';
      const authority = new URL(base).host;
      const urls = card.supportedInterfaces.filter((i) => i.protocolBinding === 'GRPC').map((i) => i.url);
      expect(same(urls, [authority]), `one GRPC interface at ${authority}`, { ...detail, got: urls });
    }
    return detail;
  });
  if (!client) return;

  let completed;
  await check('send_blocking', async () => {
    const t = await sendTask(client, msg('tck-complete-task'));
    completed = t;
    const got = [stateName(t.status.state), texts(t.status.message?.parts)];
    expect(same(got, ['TASK_STATE_COMPLETED', 'Hello from TCK']), 'COMPLETED with "Hello from TCK"', { got });
    expect(t.id && t.contextId, 'task and context ids', { got: t });
    return { id: t.id, state: got[0] };
  });

  if (noStreaming) await noStreamingChecks(client);
  else await mainChecks(client, completed);
}

async function mainChecks(client, completed) {
  await check('send_parts', async () => {
    const out = {};
    out.text = texts((await sendTask(client, msg('tck-artifact-text'))).artifacts[0].parts);
    expect(out.text === 'Generated text content', 'text artifact', { got: out });
    let p = (await sendTask(client, msg('tck-artifact-file'))).artifacts[0].parts[0];
    out.file = [p.content?.$case, Buffer.from(p.content?.value ?? []).toString(), p.filename, p.mediaType];
    expect(same(out.file, ['raw', 'Generated file content', 'output.txt', 'text/plain']), 'raw file part', { got: out });
    p = (await sendTask(client, msg('tck-artifact-file-url'))).artifacts[0].parts[0];
    out.url = [p.content?.$case, p.content?.value, p.filename, p.mediaType];
    expect(same(out.url, ['url', 'https://example.com/output.txt', 'output.txt', 'text/plain']), 'url part', { got: out });
    p = (await sendTask(client, msg('tck-artifact-data'))).artifacts[0].parts[0];
    out.data = [p.content?.$case, p.content?.value];
    expect(out.data[0] === 'data' && out.data[1]?.key === 'value' && out.data[1]?.count === 42, 'data part', { got: out });
    out.reject = stateName((await sendTask(client, msg('tck-reject-task'))).status.state);
    expect(out.reject === 'TASK_STATE_REJECTED', 'REJECTED', { got: out });
    return out;
  });

  await check('send_direct_message', async () => {
    const r = await client.sendMessage(req.send(msg('tck-message-response')));
    const got = [isTask(r) ? 'task' : 'message', texts(r.parts), Role[r.role]];
    expect(same(got, ['message', 'Direct message response', 'ROLE_AGENT']), 'a direct agent Message', { got });
    return got;
  });

  await check('stream', async () => {
    const evs = await collect(client.sendMessageStream(req.send(msg('tck-stream-001'))));
    const ks = kinds(evs);
    expect(same(ks, ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']), 'task, WORKING, artifact, COMPLETED', { got: ks });
    const states = [finalState(evs[1]), finalState(evs[3])];
    expect(same(states, ['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']), 'WORKING then COMPLETED', { got: states });
    const text = texts(evs[2].payload.value.artifact.parts);
    expect(text === 'Generated text content', 'the artifact text', { got: text });
    const ids = new Set([evs[0].payload.value.id, evs[1].payload.value.taskId, evs[2].payload.value.taskId, evs[3].payload.value.taskId]);
    expect(ids.size === 1, 'one task id throughout', { got: [...ids] });
    return { kinds: ks, states };
  });

  await check('stream_chunked', async () => {
    const evs = await collect(client.sendMessageStream(req.send(msg('tck-stream-artifact-chunked'))));
    const chunks = evs
      .filter((e) => e.payload?.$case === 'artifactUpdate')
      .map((e) => [texts(e.payload.value.artifact.parts), !!e.payload.value.append, !!e.payload.value.lastChunk]);
    expect(same(chunks, [['chunk-1 ', false, false], ['chunk-2', true, true]]), 'two chunks, append + lastChunk', { got: chunks });
    expect(finalState(evs[evs.length - 1]) === 'TASK_STATE_COMPLETED', 'COMPLETED', { got: kinds(evs) });
    return { chunks };
  });

  await check('stream_direct_message', async () => {
    const evs = await collect(client.sendMessageStream(req.send(msg('tck-message-response'))));
    expect(same(kinds(evs), ['message']), 'one message event', { got: kinds(evs) });
    return { kinds: kinds(evs) };
  });

  await check('get', async () => {
    expect(completed, 'send_blocking to have made a task');
    const t = await client.getTask(req.get(completed.id, { historyLength: 1 }));
    const got = { id: t.id === completed.id, state: stateName(t.status.state), history: t.history.length };
    expect(same(got, { id: true, state: 'TASK_STATE_COMPLETED', history: 1 }), 'the task, one history message', { got });
    const full = await client.getTask(req.get(completed.id));
    expect(full.history.length >= 1 && full.history[0].role === Role.ROLE_USER, 'the full history starting with the user message');
    return got;
  });

  await check('get_missing', async () => {
    return expectError(await errorName(() => client.getTask(req.get(`no-such-task-${randomUUID()}`))), 'TaskNotFoundError', 'TASK_NOT_FOUND');
  });

  const ctx = `ctx-js-${binding}-${randomUUID()}`;
  await check('list_pages', async () => {
    for (let i = 0; i < 3; i++) await sendTask(client, msg('echo', `n${i}`, { contextId: ctx }));
    await sendTask(client, msg('tck-reject-task', 'x', { contextId: ctx }));
    const p1 = await client.listTasks(listReq({ contextId: ctx, pageSize: 2 }));
    const p2 = await client.listTasks(listReq({ contextId: ctx, pageSize: 2, pageToken: p1.nextPageToken }));
    const ids1 = new Set(p1.tasks.map((t) => t.id));
    const got = {
      p1: p1.tasks.length, p2: p2.tasks.length, total: p1.totalSize, pageSize: p1.pageSize,
      p1Next: !!p1.nextPageToken, p2Next: p2.nextPageToken,
      distinct: !p2.tasks.some((t) => ids1.has(t.id)),
      sameContext: [...p1.tasks, ...p2.tasks].every((t) => t.contextId === ctx),
    };
    const want = { p1: 2, p2: 2, total: 4, pageSize: 2, p1Next: true, p2Next: '', distinct: true, sameContext: true };
    expect(same(got, want), want, { got });
    return got;
  });

  await check('list_filters', async () => {
    const rej = await client.listTasks(listReq({ contextId: ctx, status: TaskState.TASK_STATE_REJECTED }));
    const done = await client.listTasks(listReq({ contextId: ctx, status: TaskState.TASK_STATE_COMPLETED, includeArtifacts: true }));
    const bare = await client.listTasks(listReq({ contextId: ctx, status: TaskState.TASK_STATE_COMPLETED, historyLength: 0 }));
    const got = {
      rejected: rej.tasks.map((t) => stateName(t.status.state)),
      completed: done.tasks.length,
      withArtifacts: done.tasks.every((t) => t.artifacts.length > 0),
      texts: done.tasks.filter((t) => t.artifacts.length).map((t) => texts(t.artifacts[0].parts)).sort(),
      artifactsOmitted: bare.tasks.every((t) => t.artifacts.length === 0),
      history0: bare.tasks.every((t) => t.history.length === 0),
    };
    const want = {
      rejected: ['TASK_STATE_REJECTED'], completed: 3, withArtifacts: true, texts: ['n0', 'n1', 'n2'],
      artifactsOmitted: true, history0: true,
    };
    expect(same(got, want), want, { got });
    return got;
  });

  let canceled;
  await check('cancel_input_required', async () => {
    const t = await sendTask(client, msg('tck-input-required'));
    expect(stateName(t.status.state) === 'TASK_STATE_INPUT_REQUIRED', 'INPUT_REQUIRED', { got: stateName(t.status.state) });
    const c = await client.cancelTask(req.cancel(t.id));
    canceled = t.id;
    const g = await client.getTask(req.get(t.id));
    const got = [stateName(c.status.state), stateName(g.status.state)];
    expect(same(got, ['TASK_STATE_CANCELED', 'TASK_STATE_CANCELED']), 'CANCELED (answer and GetTask)', { got });
    return { states: got };
  });

  await check('cancel_terminal', async () => {
    expect(canceled, 'cancel_input_required to have canceled a task');
    return expectError(await errorName(() => client.cancelTask(req.cancel(canceled))), 'TaskNotCancelableError', 'TASK_NOT_CANCELABLE');
  });

  await check('subscribe_running', async () => {
    const t = await sendTask(client, msg('test-resubscribe-message-id'), { returnImmediately: true });
    const first = stateName(t.status.state);
    expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'].includes(first), 'a running task', { got: first });
    const evs = await collect(client.resubscribeTask(req.subscribe(t.id)));
    const ks = kinds(evs);
    expect(ks[0] === 'task', 'a task snapshot first', { got: ks });
    expect(finalState(evs[evs.length - 1]) === 'TASK_STATE_COMPLETED', 'the stream ends COMPLETED', { got: ks });
    return { initial: first, kinds: ks };
  });

  let delivery;
  await check('push_config_crud', async () => {
    const t = await sendTask(client, msg('test-resubscribe-message-id'), { returnImmediately: true });
    const key = `js-${binding}-${randomUUID().slice(0, 8)}`;
    const token = randomUUID().replaceAll('-', '');
    const url = `${webhook}/hook/${key}`;
    const created = await client.createTaskPushNotificationConfig(req.pushConfig({ taskId: t.id, id: 'cfg-js', url, token }));
    expect(same([created.taskId, created.id, created.url, created.token], [t.id, 'cfg-js', url, token]), 'the created config echoed', { got: created });
    const got = await client.getTaskPushNotificationConfig(req.pushRef(t.id, 'cfg-js'));
    expect(same([got.id, got.url], ['cfg-js', url]), 'GetTaskPushNotificationConfig', { got });
    const listed = await client.listTaskPushNotificationConfig(req.pushList(t.id));
    expect(same(listed.configs.map((c) => c.id), ['cfg-js']), 'one listed config', { got: listed });
    delivery = await waitDelivery(key, t.id, token);
    await client.deleteTaskPushNotificationConfig(req.pushRef(t.id, 'cfg-js'));
    const after = await client.listTaskPushNotificationConfig(req.pushList(t.id));
    expect(after.configs.length === 0, 'no config after delete', { got: after });
    const gone = await errorName(() => client.getTaskPushNotificationConfig(req.pushRef(t.id, 'cfg-js')));
    expectError(gone, 'TaskNotFoundError', 'TASK_NOT_FOUND'); // of the deleted config
    return { created: created.id, listed: 1, afterDelete: 0 };
  });

  await check('push_delivery', async () => {
    expect(delivery, 'push_config_crud to have waited for a delivery');
    expect(delivery.ok, 'a COMPLETED StreamResponse POSTed to the webhook with the token', { got: delivery });
    // Registered over gRPC; the delivery itself is HTTP whatever the binding.
    if (binding === 'grpc') delivery.deliveredOver = 'HTTP POST to the webhook (the push protocol is HTTP whatever the binding)';
    return delivery;
  });

  await check('extended_card', async () => {
    const c = await client.getAgentCard();
    expect(c.name.includes('(extended)'), 'the extended card', { got: c.name });
    return { name: c.name };
  });
}

// Poll the receiver until a COMPLETED event for the task arrived (10 s).
async function waitDelivery(key, taskId, token) {
  const deadline = Date.now() + 10_000;
  let records = [];
  while (Date.now() < deadline) {
    records = await (await realFetch(`${webhook}/received/${key}`)).json();
    for (const r of records) {
      let body;
      try {
        body = JSON.parse(r.body);
      } catch {
        continue;
      }
      const ev = body.statusUpdate ?? body.task;
      const tid = body.statusUpdate ? ev.taskId : ev?.id;
      if (tid === taskId && ev?.status?.state === 'TASK_STATE_COMPLETED') {
        const ok = r.token === token;
        return {
          ok, payload: body.statusUpdate ? 'statusUpdate' : 'task', deliveries: records.length,
          contentType: r.contentType, tokenHeader: ok ? 'matches' : r.token,
        };
      }
    }
    await sleep(100);
  }
  return { ok: false, error: 'no COMPLETED delivery within 10 s', records };
}

async function noStreamingChecks(client) {
  const card = client.agentCard;
  const forced = await factory.createFromAgentCard({
    ...card,
    capabilities: { ...card.capabilities, streaming: true, pushNotifications: true, extendedAgentCard: true },
  });

  await check('stream_falls_back', async () => {
    // The SDK itself sends a unary SendMessage when the card says streaming is off.
    const evs = await collect(client.sendMessageStream(req.send(msg('tck-stream-001'))));
    const got = [kinds(evs), finalState(evs[evs.length - 1])];
    expect(same(got, [['task'], 'TASK_STATE_COMPLETED']), 'one completed task', { got });
    return got;
  });

  await check('stream_unsupported', async () => {
    return expectError(await errorName(() => forced.sendMessageStream(req.send(msg('tck-stream-001')))), 'UnsupportedOperationError', 'UNSUPPORTED_OPERATION');
  });

  await check('subscribe_unsupported', async () => {
    // An INPUT_REQUIRED task: subscribing to it works with streaming on, so the error is the capability's.
    const t = await sendTask(forced, msg('tck-input-required'));
    return expectError(await errorName(() => forced.resubscribeTask(req.subscribe(t.id))), 'UnsupportedOperationError', 'UNSUPPORTED_OPERATION');
  });

  await check('push_unsupported', async () => {
    const t = await sendTask(forced, msg('tck-input-required'));
    const created = await errorName(() =>
      forced.createTaskPushNotificationConfig(req.pushConfig({ taskId: t.id, id: 'cfg', url: `${webhook}/hook/never`, token: 't' })),
    );
    const out = expectError(created, 'PushNotificationNotSupportedError', 'PUSH_NOTIFICATION_NOT_SUPPORTED');
    const listed = await errorName(() => forced.listTaskPushNotificationConfig(req.pushList(t.id)));
    expectError(listed, 'PushNotificationNotSupportedError', 'PUSH_NOTIFICATION_NOT_SUPPORTED');
    return out;
  });

  await check('extended_card_unsupported', async () => {
    return expectError(await errorName(() => forced.getAgentCard()), 'UnsupportedOperationError', 'UNSUPPORTED_OPERATION');
  });
}

try {
  await main();
} catch (e) {
  checks.push({ check: 'script', ok: false, detail: { exception: e?.name, message: String(e?.message ?? e), stack: String(e?.stack ?? '') } });
}
console.log(JSON.stringify({ client: 'js', binding, mode: noStreaming ? 'no-streaming' : 'main', checks }));
