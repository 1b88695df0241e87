// The official JS client (@a2a-js/sdk, pinned in js/package.json) calls every skill of every
// example agent over JSON-RPC or gRPC (its GrpcTransportFactory, on @grpc/grpc-js, picked from
// the card's GRPC interface; the card itself is read over HTTP), for tests/interop_examples.rs:
// data skills with a data part, a streaming skill through the streaming API, and skills that
// ask a question answered on the same task. The Rust test copies this file beside the
// node_modules it installed.
//
// Usage: node js_examples_client.mjs AGENTS_JSON CALLS_JSON [jsonrpc|grpc]   (default jsonrpc)
//   AGENTS_JSON: {"hello": BASE_URL, ...}
//   CALLS_JSON: [{"agent", "skill", "text"?, "data"?, "reply"?, "stream"?, "message_id"?}, ...]
//
// Prints ONE JSON line on stdout, in the shape examples_client.py prints:
//   {"binding", "transports": {agent: the transport's protocol}, "calls": [{"agent", "skill", "kind", "state", "text", "data", "status", "asked",
//               "asked_state", "chunks", "events", "error"?}, ...]}

import { randomUUID } from 'node:crypto';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { Role, TaskState } from '@a2a-js/sdk';

const BINDINGS = { jsonrpc: 'JSONRPC', grpc: 'GRPC' };
const [agents, calls] = process.argv.slice(2, 4).map((a) => JSON.parse(a));
const binding = process.argv[4] ?? 'jsonrpc';
if (!BINDINGS[binding]) {
  console.error(`binding must be one of ${Object.keys(BINDINGS)}`);
  process.exit(2);
}

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new GrpcTransportFactory()],
    preferredTransports: [BINDINGS[binding]],
  }),
);

const partsText = (parts) => (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const partsData = (parts) => (parts ?? []).filter((p) => p.content?.$case === 'data').map((p) => p.content.value);
const stateName = (s) => (s === undefined ? null : TaskState[s]);

// The call's message: its text or data part, routed with `skillId`; or, with `reply`, the
// answer to `task`'s question. Every field is present, as the SDK's TypeScript types have it
// (its gRPC encoder reads each one; the JSON writer skips a missing one).
function message(call, reply, task) {
  let content;
  if (reply !== undefined) content = { $case: 'text', value: reply };
  else if (call.data !== undefined) content = { $case: 'data', value: call.data };
  else content = { $case: 'text', value: call.text };
  return {
    messageId: `${call.message_id ?? 'js'}-${randomUUID()}`,
    contextId: task ? task.contextId : '',
    taskId: task ? task.id : '',
    role: Role.ROLE_USER,
    parts: [{ content, metadata: undefined, filename: '', mediaType: '' }],
    metadata: task ? undefined : { skillId: call.skill },
    extensions: [],
    referenceTaskIds: [],
  };
}
const request = (message) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

// What a blocking answer (a Task or a Message) amounts to.
function fromResult(r) {
  if (!('status' in r)) {
    return { kind: 'message', text: partsText(r.parts), data: partsData(r.parts), events: 1 };
  }
  const parts = (r.artifacts ?? []).flatMap((a) => a.parts ?? []);
  return {
    kind: 'task',
    task: r,
    state: stateName(r.status?.state),
    text: partsText(parts),
    data: partsData(parts),
    status: partsText(r.status?.message?.parts),
    chunks: 0,
    events: 1,
  };
}

// What a stream amounts to: the final state, the artifacts with their chunks put together.
function fromEvents(events) {
  const last = events[events.length - 1];
  if (last?.payload?.$case === 'message') {
    return { kind: 'message', text: partsText(last.payload.value.parts), data: partsData(last.payload.value.parts), events: events.length };
  }
  let task = null;
  let state = null;
  let status = '';
  let chunks = 0;
  let artifacts = new Map(); // artifact id -> its parts, in order of first appearance
  for (const ev of events) {
    const { $case, value } = ev.payload ?? {};
    if ($case === 'task') {
      task = value;
      artifacts = new Map((value.artifacts ?? []).map((a) => [a.artifactId, [...(a.parts ?? [])]]));
      state = stateName(value.status?.state);
      status = partsText(value.status?.message?.parts);
    } else if ($case === 'artifactUpdate') {
      chunks += 1;
      const a = value.artifact;
      if (value.append) artifacts.set(a.artifactId, [...(artifacts.get(a.artifactId) ?? []), ...(a.parts ?? [])]);
      else artifacts.set(a.artifactId, [...(a.parts ?? [])]);
    } else if ($case === 'statusUpdate') {
      state = stateName(value.status?.state);
      const text = partsText(value.status?.message?.parts);
      if (text) status = text;
    }
  }
  const parts = [...artifacts.values()].flat();
  return { kind: 'task', task, state, text: partsText(parts), data: partsData(parts), status, chunks, events: events.length };
}

async function send(client, call, m) {
  if (!call.stream) return fromResult(await client.sendMessage(request(m)));
  const events = [];
  for await (const ev of client.sendMessageStream(request(m))) events.push(ev);
  return fromEvents(events);
}

async function callSkill(client, call) {
  let got = await send(client, call, message(call));
  if (call.reply !== undefined && got.kind === 'task' && got.state === 'TASK_STATE_INPUT_REQUIRED') {
    const { status: asked, state: askedState, task } = got;
    if (!task) throw new Error('an INPUT_REQUIRED answer without its task');
    got = await send(client, call, message(call, call.reply, task));
    got.asked = asked;
    got.asked_state = askedState;
  }
  delete got.task;
  return got;
}

const out = [];
const clients = {};
const transports = {};
for (const [name, base] of Object.entries(agents)) {
  clients[name] = await factory.createFromUrl(base);
  transports[name] = clients[name].transport.protocolName;
}
for (const call of calls) {
  const result = { agent: call.agent, skill: call.skill };
  try {
    Object.assign(result, await callSkill(clients[call.agent], call));
  } catch (e) {
    // Recorded: the Rust test fails on it, with the reason.
    console.error(e?.stack ?? String(e));
    result.error = `${e?.name ?? 'Error'}: ${String(e?.message ?? e).slice(0, 400)}`;
  }
  out.push(result);
}
console.log(JSON.stringify({ binding, transports, calls: out }));
