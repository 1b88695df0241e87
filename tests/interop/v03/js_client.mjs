// The official JS client of A2A v0.3 (@a2a-js/sdk 0.3.14, pinned in js/package.json) against an
// agent that speaks v0.3, for tests/interop_v03.rs.
//
// Usage: node js_client.mjs BASE_URL (jsonrpc|rest) WEBHOOK_URL
// The Rust test copies this file into the directory where it installed js/package.json with
// `npm ci` (under the target directory), so the SDK resolves from that node_modules.
//
// The same scenario and check names as py_client.py, through the SDK's client API
// (`ClientFactory`, its `DefaultAgentCardResolver`, the `Client` it makes; `jsonrpc` is its
// `JsonRpcTransport`, `rest` its `RestTransport`, which speaks v0.3 HTTP+JSON as the ProtoJSON
// of the v0.3 protobuf types). Every operation is the SDK's own method, push config list and
// delete included; the malformed requests of the bad-input checks go through the SDK where it
// sends them as given (JSON-RPC: it passes the message through unchanged; HTTP+JSON: a message
// without messageId), and are posted directly where the SDK would refuse to build them (an
// unknown part kind over HTTP+JSON), the answer then read by the SDK's own error handling.
//
// The webhook receiver: `POST {WEBHOOK_URL}/hook/KEY` is recorded, `GET {WEBHOOK_URL}/received/KEY`
// lists `[{"token", "contentType", "body"}]`.
//
// Prints ONE JSON line on stdout: {"check name": "ok" | "failure description", ...}

import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransport,
  RestTransport,
  TaskNotCancelableError,
  TaskNotFoundError,
} from '@a2a-js/sdk/client';

const BINDINGS = { jsonrpc: 'JSONRPC', rest: 'HTTP+JSON' };
const TRANSPORTS = { jsonrpc: JsonRpcTransport, rest: RestTransport };
const [baseArg, binding, webhookArg] = process.argv.slice(2);
if (!BINDINGS[binding] || !webhookArg) {
  console.error('usage: node js_client.mjs BASE_URL (jsonrpc|rest) WEBHOOK_URL');
  process.exit(2);
}
const base = baseArg.replace(/\/+$/, '');
const webhook = webhookArg.replace(/\/+$/, '');

// The last exchanges on the wire, shown with a failed check.
let wire = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, init = {}) => {
  const entry = { request: `${init.method ?? 'GET'} ${url}`, body: typeof init.body === 'string' ? init.body.slice(0, 600) : undefined };
  wire.push(entry);
  if (wire.length > 8) wire.shift();
  const res = await realFetch(url, init);
  entry.status = res.status;
  const type = res.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream')) {
    // The events as they go by, from a tee of the body (the SDK reads the other branch).
    const copy = res.clone();
    entry.events = [];
    // Every event's data, whole, once the stream has ended (for checks of what the SDK drops).
    entry.done = (async () => {
      const text = await copy.text();
      const all = [];
      for (const block of text.split(/\r?\n\r?\n/)) {
        const data = block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
        if (data) {
          all.push(data);
          entry.events.push(data.slice(0, 300));
        }
      }
      return all;
    })().catch(() => []);
  } else {
    entry.response = (await res.clone().text()).slice(0, 800);
  }
  return res;
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
const same = (a, b) => isDeepStrictEqual(a, b);
const textPart = (text) => ({ kind: 'text', text });
const msg = (prefix, extra = {}) => ({
  kind: 'message',
  role: 'user',
  messageId: `${prefix}-${randomUUID()}`,
  parts: [textPart('hi')],
  ...extra,
});
const texts = (parts) => (parts ?? []).filter((p) => p.kind === 'text').map((p) => p.text).join('');
const isTask = (r) => r?.kind === 'task';
const collect = async (it) => {
  const out = [];
  // Each event as it was when it arrived.
  for await (const ev of it) out.push(structuredClone(ev));
  return out;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// The error text names one of `names` (case and underscores aside).
const mentions = (text, names) => {
  const flat = String(text ?? '').toLowerCase().replace(/[_\s]/g, '');
  return names.some((n) => flat.includes(n.toLowerCase().replace(/[_\s]/g, '')));
};
// The error a call failed with.
const failure = async (thunk) => {
  let result;
  try {
    result = thunk();
    if (result && typeof result[Symbol.asyncIterator] === 'function') result = await collect(result);
    else result = await result;
  } catch (e) {
    return e;
  }
  throw new CheckFailed({ expected: 'an error', got: result });
};
const describe = (e) => ({ name: e?.name, class: e?.constructor?.name, message: String(e?.message ?? e).slice(0, 600), errorResponse: e?.errorResponse });

// Every check, in order (tests/interop_v03.rs lists the same; py_client.py runs the same).
const CHECKS = [
  'card', 'send_text', 'send_parts', 'send_artifact_text', 'send_artifact_file_bytes', 'send_artifact_file_uri',
  'send_artifact_data', 'send_rejected', 'send_direct_message', 'input_required_reply', 'stream', 'stream_chunked',
  'stream_direct_message', 'get', 'get_missing', 'cancel_input_required', 'cancel_terminal', 'resubscribe_running',
  'push_config_set', 'push_config_get', 'push_config_list', 'push_delivery', 'push_config_delete', 'extended_card',
  'bad_input_missing_message_id', 'bad_input_unknown_part_kind',
];
const results = {};
async function check(name, fn) {
  if (!CHECKS.includes(name)) throw new Error(`${name} is not in CHECKS`);
  wire = [];
  try {
    await fn();
    results[name] = 'ok';
  } catch (e) {
    const at = String(e?.stack ?? '').split('\n').find((l) => l.includes('node_modules'))?.trim();
    const detail = e instanceof CheckFailed ? e.detail : { exception: describe(e), at };
    results[name] = `${JSON.stringify(detail).slice(0, 2500)} | wire: ${JSON.stringify(wire).slice(0, 2500)}`;
  }
}

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [BINDINGS[binding]] }),
);

async function sendTask(client, message, configuration) {
  const r = await client.sendMessage({ message, ...(configuration ? { configuration } : {}) });
  expect(isTask(r), 'a Task (kind "task")', { got: r });
  return r;
}

async function main() {
  let client;
  let url;
  await check('card', async () => {
    client = await factory.createFromUrl(base);
    const card = client.agentCard;
    const want = BINDINGS[binding];
    const interfaces = { [card.preferredTransport ?? 'JSONRPC']: card.url };
    for (const i of card.additionalInterfaces ?? []) interfaces[i.transport] = i.url;
    const detail = { protocolVersion: card.protocolVersion, url: card.url, preferredTransport: card.preferredTransport, interfaces };
    expect(String(card.protocolVersion ?? '').startsWith('0.3'), 'protocolVersion 0.3.x', detail);
    expect(interfaces[want], `an interface for ${want}`, detail);
    const authority = base.split('://')[1].replace(/\/+$/, '');
    expect(Object.entries(interfaces).every(([t, u]) => (t === 'GRPC' ? u === authority : u.startsWith(base))), `interfaces on ${base} (gRPC at ${authority})`, detail);
    expect(card.capabilities?.streaming && card.capabilities?.pushNotifications, 'streaming and pushNotifications', { got: card.capabilities });
    expect(card.supportsAuthenticatedExtendedCard === true, 'supportsAuthenticatedExtendedCard', detail);
    expect(client.transport instanceof TRANSPORTS[binding], `the SDK picks ${TRANSPORTS[binding].name}`, { got: client.transport?.constructor?.name });
    url = client.transport.endpoint.replace(/\/+$/, '');
    expect(url === interfaces[want].replace(/\/+$/, ''), `the SDK calls the ${want} url`, { got: url, ...detail });
  });
  if (!client) {
    for (const name of CHECKS.slice(1)) results[name] = 'not run: the card check failed';
    return;
  }
  const shared = {};

  await check('send_text', async () => {
    const task = await sendTask(client, msg('tck-complete-task'));
    shared.completed = task;
    const got = { state: task.status?.state, statusText: texts(task.status?.message?.parts) };
    expect(same(got, { state: 'completed', statusText: 'Hello from TCK' }), 'completed, "Hello from TCK"', { got });
    expect(task.id && task.contextId, 'task and context ids', { got: task });
  });

  await check('send_parts', async () => {
    const data = { n: 1, nested: { list: [1, 'two', null, true] } };
    const raw = Buffer.from([0, 1, 32, 98, 121, 116, 101, 115, 32, 255]);
    const sent = msg('echo', {
      parts: [
        textPart('echo me'),
        { kind: 'file', file: { bytes: raw.toString('base64'), name: 'in.bin', mimeType: 'application/octet-stream' } },
        { kind: 'file', file: { uri: 'https://example.com/in.txt', name: 'in.txt', mimeType: 'text/plain' } },
        { kind: 'data', data },
      ],
    });
    const task = await sendTask(client, sent);
    expect(task.status?.state === 'completed', 'completed', { got: task.status });
    const full = await client.getTask({ id: task.id });
    const first = (full.history ?? []).find((m) => m.messageId === sent.messageId);
    expect(first, 'the sent message in the history', { got: full });
    const kinds = first.parts.map((p) => p.kind);
    expect(same(kinds, ['text', 'file', 'file', 'data']), 'the four parts back, in order', { got: kinds });
    const [, fb, fu, d] = first.parts;
    expect(Buffer.from(fb.file.bytes ?? '', 'base64').equals(raw), 'the bytes back', { got: fb });
    expect(fu.file.uri === 'https://example.com/in.txt', 'the uri back', { got: fu });
    expect(fb.file.mimeType === 'application/octet-stream' && fu.file.mimeType === 'text/plain', 'the mime types back', { got: [fb, fu] });
    // This SDK's HTTP+JSON converters carry no file name; JSON-RPC does.
    if (binding === 'jsonrpc') expect(fb.file.name === 'in.bin' && fu.file.name === 'in.txt', 'the file names back', { got: [fb, fu] });
    expect(same(d.data, data), 'the data back', { got: d });
  });

  const firstPart = async (prefix) => {
    const task = await sendTask(client, msg(prefix));
    expect(task.status?.state === 'completed', 'completed', { got: task.status });
    const part = task.artifacts?.[0]?.parts?.[0];
    expect(part, 'an artifact with a part', { got: task });
    return part;
  };
  // This SDK's HTTP+JSON converters drop file names (both ways); JSON-RPC carries them.
  const withNames = binding === 'jsonrpc';

  await check('send_artifact_text', async () => {
    const p = await firstPart('tck-artifact-text');
    expect(p.kind === 'text' && p.text === 'Generated text content', 'a text part "Generated text content"', { got: p });
  });

  await check('send_artifact_file_bytes', async () => {
    const p = await firstPart('tck-artifact-file');
    expect(p.kind === 'file' && typeof p.file?.bytes === 'string', 'a file part with bytes', { got: p });
    const got = [Buffer.from(p.file.bytes, 'base64').toString(), p.file.mimeType, withNames ? p.file.name : 'output.txt'];
    expect(same(got, ['Generated file content', 'text/plain', 'output.txt']), 'bytes (base64) "Generated file content", text/plain, output.txt', { got: p });
  });

  await check('send_artifact_file_uri', async () => {
    const p = await firstPart('tck-artifact-file-url');
    const got = [p.kind, p.file?.uri, p.file?.mimeType, withNames ? p.file?.name : 'output.txt'];
    expect(same(got, ['file', 'https://example.com/output.txt', 'text/plain', 'output.txt']), 'a file part https://example.com/output.txt, text/plain, output.txt', { got: p });
  });

  await check('send_artifact_data', async () => {
    const p = await firstPart('tck-artifact-data');
    expect(p.kind === 'data' && same(p.data, { key: 'value', count: 42 }), 'a data part {"key": "value", "count": 42}', { got: p });
  });

  await check('send_rejected', async () => {
    const task = await sendTask(client, msg('tck-reject-task'));
    expect(task.status?.state === 'rejected', 'rejected', { got: task.status });
  });

  await check('send_direct_message', async () => {
    const r = await client.sendMessage({ message: msg('tck-message-response') });
    const got = [r?.kind, r?.role, texts(r?.parts)];
    expect(same(got, ['message', 'agent', 'Direct message response']), 'a direct agent message', { got: r });
  });

  await check('input_required_reply', async () => {
    const task = await sendTask(client, msg('tck-input-required'));
    expect(task.status?.state === 'input-required', 'input-required', { got: task.status });
    expect(texts(task.status?.message?.parts) === 'Please provide more input', 'the question', { got: task.status });
    const done = await sendTask(client, msg('tck-complete-task', { taskId: task.id, contextId: task.contextId }));
    expect(done.id === task.id && done.status?.state === 'completed', 'the same task completed', { got: done });
  });

  await check('stream', async () => {
    const evs = await collect(client.sendMessageStream({ message: msg('tck-stream-001') }));
    const kinds = evs.map((e) => e.kind);
    expect(same(kinds, ['task', 'status-update', 'artifact-update', 'status-update']), 'task, status-update, artifact-update, status-update', { got: evs });
    const got = {
      states: [evs[1].status?.state, evs[3].status?.state],
      final: [evs[1].final, evs[3].final],
      artifact: texts(evs[2].artifact?.parts),
      oneTask: new Set([evs[0].id, evs[1].taskId, evs[2].taskId, evs[3].taskId]).size === 1,
      oneContext: new Set(evs.map((e) => e.contextId)).size === 1,
    };
    const want = { states: ['working', 'completed'], final: [false, true], artifact: 'Generated text content', oneTask: true, oneContext: true };
    expect(same(got, want), want, { got });
  });

  await check('stream_chunked', async () => {
    const evs = await collect(client.sendMessageStream({ message: msg('tck-stream-artifact-chunked') }));
    const updates = evs.filter((e) => e.kind === 'artifact-update');
    let appends = updates.map((e) => Boolean(e.append));
    if (binding === 'rest') {
      // This SDK's HTTP+JSON converter drops `append` (FromProto.taskArtifactUpdateEvent): read
      // it from the events on the wire.
      const sent = (await wire.findLast((w) => w.events)?.done) ?? [];
      appends = sent.map((d) => JSON.parse(d).artifactUpdate).filter(Boolean).map((a) => Boolean(a.append));
    }
    const chunks = updates.map((e, i) => [texts(e.artifact?.parts), appends[i], Boolean(e.lastChunk)]);
    expect(same(chunks, [['chunk-1 ', false, false], ['chunk-2', true, true]]), 'two chunks, append + lastChunk', { got: chunks });
    const last = evs[evs.length - 1];
    expect(last?.kind === 'status-update' && last.final === true && last.status?.state === 'completed', 'a final completed status-update', { got: last });
  });

  await check('stream_direct_message', async () => {
    const evs = await collect(client.sendMessageStream({ message: msg('tck-message-response') }));
    expect(same(evs.map((e) => e.kind), ['message']) && texts(evs[0].parts) === 'Direct message response', 'one message event', { got: evs });
  });

  await check('get', async () => {
    const done = shared.completed;
    expect(done, 'send_text to have made a task');
    const task = await client.getTask({ id: done.id, historyLength: 1 });
    const got = { kind: task.kind, id: task.id === done.id, state: task.status?.state, history: (task.history ?? []).length };
    expect(same(got, { kind: 'task', id: true, state: 'completed', history: 1 }), 'the task with historyLength 1', { got });
    const full = await client.getTask({ id: done.id });
    expect(full.history?.[0]?.role === 'user', 'the full history, from the user message', { got: full });
  });

  // A typed error of the SDK: over JSON-RPC from the error's code, over HTTP+JSON from the
  // error body's `code` (this SDK maps nothing else).
  const typed = (e, cls, code) => {
    expect(e instanceof cls, cls.name, { got: describe(e) });
    if (binding === 'jsonrpc') expect(e.errorResponse?.error?.code === code, `code ${code}`, { got: describe(e) });
  };

  await check('get_missing', async () => {
    typed(await failure(() => client.getTask({ id: `no-such-task-${randomUUID()}` })), TaskNotFoundError, -32001);
  });

  const cancel = {};
  await check('cancel_input_required', async () => {
    const task = await sendTask(client, msg('tck-input-required'));
    expect(task.status?.state === 'input-required', 'input-required', { got: task.status });
    const canceled = await client.cancelTask({ id: task.id });
    cancel.id = task.id;
    const again = await client.getTask({ id: task.id });
    const got = [canceled.kind, canceled.status?.state, again.status?.state];
    expect(same(got, ['task', 'canceled', 'canceled']), 'canceled (the answer and tasks/get)', { got });
  });

  await check('cancel_terminal', async () => {
    expect(cancel.id, 'cancel_input_required to have canceled a task');
    typed(await failure(() => client.cancelTask({ id: cancel.id })), TaskNotCancelableError, -32002);
  });

  await check('resubscribe_running', async () => {
    const task = await sendTask(client, msg('test-resubscribe-message-id'), { blocking: false });
    expect(['submitted', 'working'].includes(task.status?.state), 'a running task (blocking: false)', { got: task.status });
    const evs = await collect(client.resubscribeTask({ id: task.id }));
    const last = evs[evs.length - 1];
    expect(last?.kind === 'status-update' && last.final === true && last.status?.state === 'completed', 'the stream ends with a final completed status-update', { got: evs });
    expect(evs.every((e) => (e.kind === 'task' ? e.id : e.taskId) === task.id), 'every event of the task', { got: evs });
  });

  const push = {};
  await check('push_config_set', async () => {
    const task = await sendTask(client, msg('test-resubscribe-message-id'), { blocking: false });
    Object.assign(push, { task: task.id, key: `js-${binding}-${randomUUID().slice(0, 8)}`, token: randomUUID() });
    push.url = `${webhook}/hook/${push.key}`;
    const got = await client.setTaskPushNotificationConfig({
      taskId: task.id,
      pushNotificationConfig: { id: 'cfg-js', url: push.url, token: push.token },
    });
    const c = got.pushNotificationConfig ?? {};
    expect(same([got.taskId, c.id, c.url, c.token], [task.id, 'cfg-js', push.url, push.token]), 'the config echoed', { got });
    push.set = true;
  });

  await check('push_config_get', async () => {
    expect(push.set, 'push_config_set to have set a config');
    const got = await client.getTaskPushNotificationConfig({ id: push.task, pushNotificationConfigId: 'cfg-js' });
    const c = got.pushNotificationConfig ?? {};
    expect(same([got.taskId, c.id, c.url], [push.task, 'cfg-js', push.url]), 'the config', { got });
  });

  await check('push_config_list', async () => {
    expect(push.set, 'push_config_set to have set a config');
    const list = await client.listTaskPushNotificationConfig({ id: push.task });
    const got = (list ?? []).map((c) => [c.taskId, c.pushNotificationConfig?.id, c.pushNotificationConfig?.url]);
    expect(same(got, [[push.task, 'cfg-js', push.url]]), 'one listed config', { got: list });
  });

  await check('push_delivery', async () => {
    expect(push.set, 'push_config_set to have set a config');
    // Every pushed body: a v0.3 Task (kind "task", a lowercase state) with the config's token.
    const deadline = Date.now() + 10000;
    let records = [];
    while (Date.now() < deadline) {
      records = await (await realFetch(`${webhook}/received/${push.key}`)).json();
      let done = false;
      for (const r of records) {
        let body;
        try {
          body = JSON.parse(r.body);
        } catch {
          throw new CheckFailed({ expected: 'a JSON body', got: r });
        }
        expect(body.kind === 'task' && body.id === push.task, 'the Task pushed (kind "task")', { got: r });
        expect(/^[a-z-]+$/.test(body.status?.state ?? ''), 'a v0.3 (lowercase) state', { got: r });
        expect(r.token === push.token, 'X-A2A-Notification-Token: the config token', { got: r });
        done ||= body.status.state === 'completed';
      }
      if (done) return;
      await sleep(100);
    }
    throw new CheckFailed({ expected: 'a completed Task pushed within 10 s', records });
  });

  await check('push_config_delete', async () => {
    expect(push.set, 'push_config_set to have set a config');
    await client.deleteTaskPushNotificationConfig({ id: push.task, pushNotificationConfigId: 'cfg-js' });
    const after = await client.listTaskPushNotificationConfig({ id: push.task });
    expect(Array.isArray(after) && after.length === 0, 'no config after the delete', { got: after });
  });

  await check('extended_card', async () => {
    const card = await client.getAgentCard();
    expect(String(card?.name).includes('(extended)'), 'the extended card', { got: card?.name });
  });

  // The v0.3 error for a malformed message, naming the field: over JSON-RPC -32602 (or
  // -32600) in the JSON-RPC error; over HTTP+JSON an HTTP 4xx whose body has that `code`
  // (what this SDK reads errors from) and a `message`.
  const badInput = (e, names) => {
    const d = describe(e);
    if (binding === 'jsonrpc') {
      const err = e?.errorResponse?.error ?? {};
      expect([-32602, -32600].includes(err.code), 'InvalidParams (-32602) or InvalidRequest (-32600)', { got: d });
      expect(mentions(err.message, names), `an error message naming ${names.join(' or ')}`, { got: d });
    } else {
      // RestTransport: `REST error: {message} (Code: {code})` when the body has a code.
      const m = /^REST error: ([\s\S]*) \(Code: (-?\d+)\)/.exec(d.message);
      expect(m && ['-32602', '-32600'].includes(m[2]), 'an error body with code -32602 or -32600', { got: d });
      expect(mentions(m[1], names), `an error message naming ${names.join(' or ')}`, { got: d });
      const status = wire[wire.length - 1]?.status;
      expect(status >= 400 && status < 500, 'an HTTP 4xx', { got: status });
    }
  };

  await check('bad_input_missing_message_id', async () => {
    const { messageId, ...message } = msg('echo');
    badInput(await failure(() => client.sendMessage({ message })), ['messageId']);
  });

  await check('bad_input_unknown_part_kind', async () => {
    if (binding === 'jsonrpc') {
      const message = msg('echo', { parts: [{ kind: 'video', uri: 'https://example.com/clip.mp4' }] });
      badInput(await failure(() => client.sendMessage({ message })), ['parts[0]', 'kind', 'video']);
      return;
    }
    // The SDK refuses to convert an unknown part itself: the ProtoJSON it would send, with one.
    const body = {
      message: { messageId: `echo-${randomUUID()}`, role: 'ROLE_USER', content: [{ video: { uri: 'https://example.com/clip.mp4' } }] },
      configuration: { blocking: true },
    };
    const res = await fetch(`${url}/v1/message:send`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(!res.ok, 'an error', { status: res.status });
    badInput(await failure(() => client.transport._handleErrorResponse(res, '/v1/message:send')), ['content[0]', 'video']);
  });
}

await main();
console.log(JSON.stringify(results));
