// A Model Context Protocol client built on the official TypeScript SDK, driving `txbox mcp`
// for tests/integration/t_mcp.sh and bench/mcp_bench.sh.
//   node client.mjs scenario TXBOX_ARGV...   the integration scenario; prints key=value lines
//   node client.mjs close TXBOX_ARGV...      close() while a command runs; prints how long it took
//   node client.mjs bench N TXBOX_ARGV...    N run_command calls; prints per-call milliseconds
// Values are on one line (newlines shown as \n).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [mode, ...rest] = process.argv.slice(2);
const out = (k, v) => console.log(`${k}=${String(v).replace(/\n/g, '\\n')}`);

async function connect(argv) {
  const transport = new StdioClientTransport({
    command: argv[0], args: argv.slice(1), env: { ...process.env }, stderr: 'inherit',
  });
  const client = new Client({ name: 'txbox-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// A call that should fail at the protocol level: its JSON-RPC error code, or "none".
async function errorCode(p) {
  try { await p; return 'none'; } catch (e) { return e.code ?? `no code: ${e.message}`; }
}

async function scenario(argv) {
  const client = await connect(argv);
  out('server', client.getServerVersion()?.name);
  out('instructions', client.getInstructions() ? 'yes' : 'no');
  const { tools } = await client.listTools();
  out('tools', tools.map((t) => t.name).sort().join(','));
  out('schemas', tools.every((t) => t.inputSchema?.type === 'object') ? 'all' : 'missing');

  const run = await client.callTool({ name: 'run_command',
    arguments: { command: 'echo hello >hello.txt && echo out && echo err >&2' } });
  const sc = run.structuredContent;
  out('run.outcome', sc.outcome);
  out('run.exit_code', sc.exit_code);
  out('run.stdout', sc.stdout);
  out('run.stderr', sc.stderr);
  out('run.added', sc.changes.added.join(','));
  out('run.isError', run.isError);
  out('run.text_has_file', run.content[0].text.includes('hello.txt'));
  const tx = sc.tx;

  const bad = await client.callTool({ name: 'run_command', arguments: { command: 'rm -rf ~' } });
  out('deny.outcome', bad.structuredContent.outcome);
  out('deny.decision', bad.structuredContent.decision);
  out('deny.rule', bad.structuredContent.rule);
  out('deny.isError', bad.isError);
  out('deny.text_has_rule', bad.content[0].text.includes(bad.structuredContent.rule ?? '@@'));
  out('deny.text_has_reason', bad.content[0].text.includes(bad.structuredContent.reason ?? '@@'));

  const chk = await client.callTool({ name: 'check_command', arguments: { command: 'ls -la' } });
  out('check.decision', chk.structuredContent.decision);

  const list = await client.callTool({ name: 'list_transactions', arguments: { limit: 10 } });
  const txs = list.structuredContent.transactions;
  out('list.count', txs.length);
  out('list.outcomes', txs.map((t) => t.outcome).join(','));

  const show = await client.callTool({ name: 'show_transaction', arguments: { tx } });
  out('show.tx', show.structuredContent.tx === tx);
  out('show.diff_has_hello', show.structuredContent.diff.includes('+hello'));

  const undo = await client.callTool({ name: 'undo_transaction', arguments: {} });
  out('undo.tx', undo.structuredContent.tx === tx);
  out('undo.outcome', undo.structuredContent.outcome);

  // A session: two commands, one savepoint each, committed at once.
  const begin = await client.callTool({ name: 'begin_transaction', arguments: {} });
  const sid = begin.structuredContent.tx;
  await client.callTool({ name: 'run_command', arguments: { command: 'echo 1 >s1.txt', tx: sid } });
  await client.callTool({ name: 'run_command', arguments: { command: 'echo 2 >s2.txt', tx: sid } });
  const commit = await client.callTool({ name: 'commit_transaction', arguments: { tx: sid } });
  out('session.outcome', commit.structuredContent.outcome);
  out('session.added', commit.structuredContent.changes.added.sort().join(','));

  const kept = await client.callTool({ name: 'run_command', arguments: { command: 'echo k >k.txt', commit: 'keep' } });
  const rb = await client.callTool({ name: 'rollback_transaction', arguments: { tx: kept.structuredContent.tx } });
  out('rollback.outcome', rb.structuredContent.outcome);

  const big = await client.callTool({ name: 'run_command', arguments: { command: 'head -c 200000 /dev/zero | tr "\\0" a' } });
  out('big.truncated', big.structuredContent.truncated);
  out('big.stdout_len', big.structuredContent.stdout.length);

  // Since MCP 2025-11-25, bad arguments are tool results with isError: the model reads them.
  const toolError = async (p) => {
    try { const r = await p; return r.isError ? `isError: ${r.content[0].text}` : 'not an error'; } catch (e) { return `threw ${e.code}`; }
  };
  out('err.wrong_type', await toolError(client.callTool({ name: 'run_command', arguments: { command: 5 } })));
  out('err.unknown_tool', await errorCode(client.callTool({ name: 'format_disk', arguments: {} })));
  out('err.missing_arg', await toolError(client.callTool({ name: 'show_transaction', arguments: {} })));
  out('outschemas', tools.every((t) => Object.keys(t.outputSchema?.properties ?? {}).length > 0) ? 'all' : 'missing');
  out('text_is_json', JSON.stringify(JSON.parse(run.content[0].text)) === JSON.stringify(sc));

  // Cancellation: the SDK sends notifications/cancelled; the command is killed and rolled back,
  // and the server answers a ping meanwhile and the next call at once.
  const ac = new AbortController();
  const slow = client.callTool({ name: 'run_command', arguments: { command: 'echo c >cancelled.txt; sleep 120' } },
    undefined, { signal: ac.signal });
  await new Promise((r) => setTimeout(r, 1500));
  let t0 = Date.now();
  await client.ping();
  out('cancel.ping_ms', Date.now() - t0);
  ac.abort('the test cancels');
  out('cancel.call', await slow.then(() => 'answered', (e) => `rejected: ${e.name}`));
  t0 = Date.now();
  const next = await client.callTool({ name: 'list_transactions', arguments: { limit: 1 } });
  out('cancel.next_ms', Date.now() - t0);
  out('cancel.outcome', next.structuredContent.transactions[0].outcome);
  out('cancel.message', next.structuredContent.transactions[0].message);
  // A request that times out on the client's side is cancelled the same way.
  out('timeout.call', await client.callTool({ name: 'run_command', arguments: { command: 'echo t >timedout.txt; sleep 120' } },
    undefined, { timeout: 1500 }).then(() => 'answered', (e) => `rejected: ${e.code}`));
  const last = await client.callTool({ name: 'list_transactions', arguments: { limit: 1 } });
  out('timeout.outcome', last.structuredContent.transactions[0].outcome);
  // A 5,000-file change: the result keeps within the server's budget (4 KB beyond the
  // command's output), says first what happened, has the whole counts; the full list is one
  // call away (show_transaction, or run_command paths: "all").
  const bytes = (r) => r.content.reduce((n, c) => n + Buffer.byteLength(c.text), 0);
  const gen = await client.callTool({ name: 'run_command',
    arguments: { command: 'mkdir -p gen/a && cd gen/a && seq 5000 | xargs touch' } });
  const gsc = gen.structuredContent;
  out('gen.outcome', gsc.outcome);
  out('gen.text_bytes', bytes(gen));
  out('gen.json_bytes', Buffer.byteLength(gen.content[0].text));
  out('gen.summary', gsc.summary);
  out('gen.counts', `${gsc.change_counts.added},${gsc.change_counts.modified},${gsc.change_counts.deleted}`);
  out('gen.truncated', gsc.changes_truncated);
  out('gen.listed', gsc.changes.added.length);
  out('gen.text', gen.content[1].text);
  const gshow = await client.callTool({ name: 'show_transaction', arguments: { tx: gsc.tx } });
  out('gen.show_listed', gshow.structuredContent.changes.added.length);
  const gdel = await client.callTool({ name: 'run_command', arguments: { command: 'rm -rf gen' } });
  out('gendel.text_bytes', bytes(gdel));
  out('gendel.first_line', gdel.content[1].text.split('\n')[0]);
  const gall = await client.callTool({ name: 'run_command',
    arguments: { command: 'mkdir -p all && cd all && seq 3000 | xargs touch', paths: 'all' } });
  out('genall.listed', gall.structuredContent.changes.added.length);
  out('genall.truncated', gall.structuredContent.changes_truncated);
  const glist = await client.callTool({ name: 'list_transactions', arguments: { limit: 5 } });
  out('genlist.bytes', bytes(glist));
  out('err.unknown_method', await errorCode(client.request({ method: 'resources/list' },
    (await import('@modelcontextprotocol/sdk/types.js')).ListResourcesResultSchema)));
  await client.ping();
  out('ping', 'ok');
  await client.close();
  out('done', 'yes');
}

// The client goes away while a command that ignores SIGTERM runs: close() ends stdin, then
// signals.  Prints how long close() took; the caller checks that the command was rolled back.
async function close(argv) {
  const client = await connect(argv);
  const p = client.callTool({ name: 'run_command', arguments: { command: "trap '' TERM; echo z >closed.txt; sleep 600" } });
  p.catch(() => {});
  await new Promise((r) => setTimeout(r, 1500));
  const t0 = Date.now();
  await client.close();
  out('close_ms', Date.now() - t0);
}

async function bench(n, argv) {
  const client = await connect(argv);
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const r = await client.callTool({ name: 'run_command', arguments: { command: 'true' } });
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.structuredContent.status !== 0) throw new Error(`run_command failed: ${r.content[0].text}`);
  }
  await client.close();
  console.log(ms.map((x) => x.toFixed(3)).join('\n'));
}

try {
  if (mode === 'scenario') await scenario(rest);
  else if (mode === 'bench') await bench(Number(rest[0]), rest.slice(1));
  else if (mode === 'close') await close(rest);
  else throw new Error('usage: client.mjs scenario|close|bench N TXBOX_ARGV...');
} catch (e) {
  out('fatal', e.stack || e);
  process.exit(1);
}
