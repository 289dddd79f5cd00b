// A scripted model server on 127.0.0.1 for tests/clients/: it speaks just enough of the
// Anthropic Messages API (Claude Code), the OpenAI Responses API (Codex) and the Gemini API
// (Gemini CLI) to drive a real client through a scripted session, with no sign-in and no
// network.  It never runs anything itself.
//
//   node model_server.mjs SCRIPT LOG PORTFILE
//
// SCRIPT is a JSON file: {"steps": [STEP, ...], "final": "text"}, a STEP being
// {"call": {"name": TOOL, "input": {...}}}.  The reply to a request is a function of the
// conversation it carries, not of the order of requests (clients make side requests: titles,
// quota probes, next-speaker checks): a request that offers tools gets step N, N being the
// number of tool calls already in its conversation, and the final text once the steps are
// used up; a request without tools gets a short text (JSON for one that asks for JSON).
// Every request is appended to LOG as one JSON line {"path", "body"}; the port is written to
// PORTFILE once the server listens.  The script is read again for every request, so that a
// test may swap it between sessions.
import http from 'node:http';
import fs from 'node:fs';

const [scriptFile, logFile, portFile] = process.argv.slice(2);
if (!portFile) {
  console.error('usage: node model_server.mjs SCRIPT LOG PORTFILE');
  process.exit(2);
}

const script = () => JSON.parse(fs.readFileSync(scriptFile, 'utf8'));
let nextId = 1;
const newId = (p) => `${p}${Date.now().toString(36)}${(nextId++).toString(36)}`;

// The step a conversation is at: how many tool calls the model made in it so far.  A call
// name "~NAME" stands for the offered tool whose name ends in NAME (clients prefix MCP tools
// in their own ways: mcp__txbox__run_command, txbox__run_command, ...).
function pick(ncalls, toolNames) {
  const s = script();
  if (!toolNames.length) return { text: s.side ?? 'ok' };
  if (ncalls >= s.steps.length) return { text: s.final ?? 'done' };
  const step = s.steps[ncalls];
  if (!step.call?.name?.startsWith('~')) return step;
  const want = step.call.name.slice(1);
  const name = toolNames.find((n) => n === want) ?? toolNames.find((n) => n.endsWith(want)) ?? want;
  return { call: { ...step.call, name } };
}
const names = (tools) => (Array.isArray(tools) ? tools : []).map((t) => t.name ?? t.function?.name).filter(Boolean);

// ---- Anthropic Messages (POST /v1/messages) ----
// Claude Code defers MCP tools: their names are listed in the prompt and the model loads
// one with ToolSearch ("select:NAME") before calling it, as a real model does.  Those
// searches are not steps of the script.
function anthropic(body, res) {
  let ncalls = 0;
  const searched = [];
  for (const m of body.messages ?? [])
    if (m.role === 'assistant' && Array.isArray(m.content))
      for (const b of m.content.filter((c) => c.type === 'tool_use'))
        if (b.name === 'ToolSearch') searched.push(String(b.input?.query ?? ''));
        else ncalls++;
  const wantsJson = JSON.stringify(body.system ?? '').includes('JSON');
  const offered = names(body.tools);
  const deferred = offered.includes('ToolSearch')
    ? [...new Set(`${JSON.stringify(body.system ?? '')}${JSON.stringify(body.messages ?? [])}`.match(/mcp__[A-Za-z0-9_-]+/g) ?? [])]
    : [];
  let step = pick(ncalls, offered.concat(deferred.filter((n) => !offered.includes(n))));
  if (step.call && !offered.includes(step.call.name) && deferred.includes(step.call.name) &&
      !searched.some((q) => q.includes(step.call.name)))
    step = { call: { name: 'ToolSearch', input: { query: `select:${step.call.name}` } } };
  // Claude Code connects MCP servers while the session starts, and the first request may
  // come before the server's tools are listed: search for it, as a model would, a few times.
  const want = script().steps[ncalls]?.call?.name;
  if (step.call && want?.startsWith('~') && !offered.includes(step.call.name) && !deferred.includes(step.call.name) &&
      offered.includes('ToolSearch') && searched.length < 5)
    step = { call: { name: 'ToolSearch', input: { query: want.slice(1) } } };
  if (!step.call && wantsJson && !(body.tools?.length)) step = { text: '{"isNewTopic": false, "title": "test"}' };
  const block = step.call
    ? { type: 'tool_use', id: newId('toolu_'), name: step.call.name, input: step.call.input }
    : { type: 'text', text: step.text };
  const msg = {
    id: newId('msg_'), type: 'message', role: 'assistant', model: body.model ?? 'test', content: [],
    stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 },
  };
  const stop = step.call ? 'tool_use' : 'end_turn';
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...msg, content: [block], stop_reason: stop }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev('message_start', { message: msg });
  if (step.call) {
    ev('content_block_start', { index: 0, content_block: { ...block, input: {} } });
    ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
  } else {
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: block.text } });
  }
  ev('content_block_stop', { index: 0 });
  ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
  ev('message_stop', {});
  res.end();
}

// ---- OpenAI Responses (POST /v1/responses), streamed as Codex reads it ----
function responses(body, res) {
  const input = Array.isArray(body.input) ? body.input : [];
  const ncalls = input.filter((i) => i.type === 'function_call' || i.type === 'custom_tool_call' ||
    i.type === 'local_shell_call').length;
  // Codex offers an MCP server's tools as one "namespace" tool (mcp__txbox) holding them; a
  // call to one of them names its namespace.
  const nsOf = new Map();
  for (const t of body.tools ?? []) for (const u of t.tools ?? []) if (u.name) nsOf.set(u.name, t.name);
  const step = pick(ncalls, names((body.tools ?? []).filter((t) => t.type !== 'namespace')).concat([...nsOf.keys()]));
  const rid = newId('resp_');
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev('response.created', { response: { id: rid } });
  // A freeform ("custom") tool, as Codex offers apply_patch to the models that take it, is
  // called with its input as text: the step's input.input.
  const custom = step.call && (body.tools ?? []).some((t) => t.type === 'custom' && t.name === step.call.name);
  const item = !step.call
    ? { type: 'message', id: newId('msg_'), role: 'assistant', content: [{ type: 'output_text', text: step.text }] }
    : custom
    ? { type: 'custom_tool_call', id: newId('ctc_'), call_id: newId('call_'), name: step.call.name,
        input: String(step.call.input?.input ?? '') }
    : { type: 'function_call', id: newId('fc_'), call_id: newId('call_'), name: step.call.name,
        ...(nsOf.has(step.call.name) ? { namespace: nsOf.get(step.call.name) } : {}),
        arguments: JSON.stringify(step.call.input) };
  ev('response.output_item.done', { output_index: 0, item });
  ev('response.completed', {
    response: { id: rid, usage: { input_tokens: 10, input_tokens_details: null, output_tokens: 5,
      output_tokens_details: null, total_tokens: 15 } },
  });
  res.end();
}

// ---- OpenAI Chat Completions (POST /v1/chat/completions), for txbox agent or others ----
function chat(body, res) {
  const ncalls = (body.messages ?? []).filter((m) => m.role === 'assistant')
    .reduce((n, m) => n + (m.tool_calls?.length ?? 0), 0);
  const step = pick(ncalls, names(body.tools));
  const message = step.call
    ? { role: 'assistant', content: null, tool_calls: [{ id: newId('call_'), type: 'function',
        function: { name: step.call.name, arguments: JSON.stringify(step.call.input) } }] }
    : { role: 'assistant', content: step.text };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: newId('chat_'), object: 'chat.completion', model: body.model,
    choices: [{ index: 0, message, finish_reason: step.call ? 'tool_calls' : 'stop' }] }));
}

// ---- Gemini (POST /v1beta/models/M:generateContent | :streamGenerateContent?alt=sse) ----
function gemini(path, body, res) {
  if (path.includes(':countTokens')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ totalTokens: 10 }));
    return;
  }
  let ncalls = 0;
  for (const c of body.contents ?? [])
    if (c.role === 'model') ncalls += (c.parts ?? []).filter((p) => p.functionCall).length;
  const tools = (body.tools ?? body.config?.tools ?? []).flatMap((t) => t.functionDeclarations ?? []);
  let step = pick(ncalls, tools.map((f) => f.name));
  const json = body.generationConfig?.responseMimeType === 'application/json' ||
    body.config?.responseMimeType === 'application/json';
  if (!step.call && json && !tools.length)
    step = { text: '{"reasoning": "the task is done", "next_speaker": "user"}' };
  const part = step.call ? { functionCall: { name: step.call.name, args: step.call.input } } : { text: step.text };
  const reply = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'test',
  };
  if (path.includes(':streamGenerateContent')) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(reply)}\n\n`);
    res.end();
  } else {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply));
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    let body = {};
    try { body = raw ? JSON.parse(raw) : {}; } catch { body = { unparsed: raw.slice(0, 200) }; }
    fs.appendFileSync(logFile, JSON.stringify({ method: req.method, path: req.url, body }) + '\n');
    try {
      const path = req.url.split('?')[0];
      if (req.method !== 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(path.endsWith('/models') ? JSON.stringify({ object: 'list', data: [], models: [] }) : '{}');
      } else if (path.endsWith('/messages/count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"input_tokens": 10}');
      } else if (path.endsWith('/messages')) {
        anthropic(body, res);
      } else if (path.endsWith('/responses')) {
        responses(body, res);
      } else if (path.endsWith('/chat/completions')) {
        chat(body, res);
      } else if (path.includes('/models/')) {
        gemini(req.url, body, res);
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error": {"message": "not scripted"}}');
      }
    } catch (e) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(e) } }));
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(`${portFile}.tmp`, String(server.address().port));
  fs.renameSync(`${portFile}.tmp`, portFile);
});
// Bounded: a test that forgets the server does not leave it running.
setTimeout(() => process.exit(0), Number(process.env.MODEL_SERVER_LIFETIME_S ?? 900) * 1000).unref();
