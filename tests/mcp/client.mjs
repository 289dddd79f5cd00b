// A Model Context Protocol client built on the official TypeScript SDK, driving `txbox mcp`
// for tests/integration/t_mcp.sh and bench/mcp_bench.sh.
//   node client.mjs scenario TXBOX_ARGV...   the integration scenario; prints key=value lines
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

  out('err.wrong_type', await errorCode(client.callTool({ name: 'run_command', arguments: { command: 5 } })));
  out('err.unknown_tool', await errorCode(client.callTool({ name: 'format_disk', arguments: {} })));
  out('err.missing_arg', await errorCode(client.callTool({ name: 'show_transaction', arguments: {} })));
  out('err.unknown_method', await errorCode(client.request({ method: 'resources/list' },
    (await import('@modelcontextprotocol/sdk/types.js')).ListResourcesResultSchema)));
  await client.ping();
  out('ping', 'ok');
  await client.close();
  out('done', 'yes');
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
  else throw new Error('usage: client.mjs scenario|bench N TXBOX_ARGV...');
} catch (e) {
  out('fatal', e.stack || e);
  process.exit(1);
}
