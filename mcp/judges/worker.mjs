// A worker written on the official TypeScript SDK (@modelcontextprotocol/sdk), driving a real
// `steward mcp` through the whole worker lifecycle and the refusals steward promises
// (docs/mcp.md), over stdio or Streamable HTTP. Every structuredContent is checked against
// its tool's output schema by the SDK itself (callTool after listTools). Any failed check
// exits non-zero. Run by scripts/mcp-judges:
//
//   node worker.mjs stdio <workspace.json> <steward binary>
//   node worker.mjs http  <workspace.json> <url> <token file>
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmptyResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const [mode, wsPath, a3, a4] = process.argv.slice(2);
const ws = JSON.parse(readFileSync(wsPath, 'utf8'));
// The workspace's configured remote is not origin: items named without one take it.
const REMOTE = 'prgs';
let checks = 0;

function check(cond, what, detail) {
  if (!cond) {
    const d = detail === undefined ? '' : ': ' + JSON.stringify(detail).slice(0, 2000);
    throw new Error(`${mode}: ${what}${d}`);
  }
  checks++;
  console.log(`ok ${mode} ${what}`);
}

function envOf() {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', STEWARD_GITEA_REMOTE: REMOTE };
  if (process.env.XDG_CONFIG_HOME) env.XDG_CONFIG_HOME = process.env.XDG_CONFIG_HOME;
  for (const kv of ws.env) {
    const i = kv.indexOf('=');
    env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return env;
}

const token = mode === 'http' ? readFileSync(a4, 'utf8').trim() : '';

async function connect() {
  const c = new Client({ name: 'steward-judge', version: '1.0.0' });
  let t;
  if (mode === 'stdio') {
    t = new StdioClientTransport({ command: a3, args: ['mcp', '--as-role', 'operator', ...ws.args], env: envOf(), stderr: 'inherit' });
  } else {
    // The scheme in lower case: RFC 9110 makes it case-insensitive (it was refused 401).
    t = new StreamableHTTPClientTransport(new URL(a3), { requestInit: { headers: { Authorization: `bearer ${token}` } } });
  }
  await c.connect(t);
  const { tools } = await c.listTools(); // caches the output schemas callTool checks against
  return { c, tools };
}

async function call(c, name, args) {
  const r = await c.callTool({ name, arguments: args });
  check(r.structuredContent && typeof r.structuredContent === 'object', `${name} returns structuredContent`);
  return { isError: !!r.isError, sc: r.structuredContent };
}

function walk(schema, path, fn) {
  if (!schema || typeof schema !== 'object') return;
  fn(schema, path);
  for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v, `${path}.${k}`, fn);
  if (schema.items) walk(schema.items, `${path}[]`, fn);
  for (const k of ['anyOf', 'oneOf', 'allOf']) (schema[k] ?? []).forEach((s, i) => walk(s, `${path}.${k}[${i}]`, fn));
}

async function main() {
  const S = `judge-${mode}-${randomUUID().slice(0, 8)}`;
  const S2 = `${S}-other`;
  const A = await connect();

  // Point 2: every input schema lists what is required, no type is an array.
  check(A.tools.length >= 14, 'tools/list lists the worker tools', A.tools.map((t) => t.name));
  for (const t of A.tools) {
    check(Array.isArray(t.inputSchema.required) && t.inputSchema.required.includes('session_id'), `${t.name}: inputSchema requires session_id`, t.inputSchema.required);
    check(t.outputSchema && t.outputSchema.type === 'object', `${t.name}: has an outputSchema`);
    const arrays = [];
    walk(t.inputSchema, 'in', (s, p) => Array.isArray(s.type) && arrays.push(p));
    walk(t.outputSchema, 'out', (s, p) => Array.isArray(s.type) && arrays.push(p));
    check(arrays.length === 0, `${t.name}: no type is an array`, arrays);
  }

  // Point 1: a successful dry run is no error.
  const dry = await call(A.c, 'gitea_allocate_next_work', { session_id: S, apply: false });
  check(!dry.isError && dry.sc.result === 'previewed' && dry.sc.item, 'a dry run (apply=false) is previewed, isError false', dry);

  // The lifecycle: claim next, heartbeat, my_leases, item_status, release.
  const rid = randomUUID();
  const c1 = await call(A.c, 'claim', { session_id: S, next: true, request_id: rid });
  check(!c1.isError && c1.sc.success && c1.sc.fence?.claim_token, 'claim next succeeds with a fence and a claim token', c1.sc.code);
  check(c1.sc.item.remote === REMOTE, `the claimed item names the workspace's remote (${REMOTE})`, c1.sc.item);
  // Point 5: a retry with the same request_id gets the first answer.
  const c1again = await call(A.c, 'claim', { session_id: S, next: true, request_id: rid });
  check(isDeepStrictEqual(c1again.sc, c1.sc), 'a claim retried with its request_id gets the first answer');
  const reused = await call(A.c, 'claim', { session_id: S, item: { number: c1.sc.item.number }, request_id: rid });
  check(reused.isError && reused.sc.code === 'invalid_request', 'a request_id reused for another call is refused', reused.sc.code);

  const hb = await call(A.c, 'heartbeat', { session_id: S, fence: c1.sc.fence, request_id: randomUUID() });
  check(!hb.isError && hb.sc.success && hb.sc.fence.expires_at, 'heartbeat succeeds with a new fence', hb.sc.code);
  const stale = await call(A.c, 'heartbeat', { session_id: S, fence: c1.sc.fence });
  check(stale.isError && stale.sc.code === 'fence_moved', 'a stale fence is refused fence_moved', stale.sc.code);
  const ml = await call(A.c, 'my_leases', { session_id: S });
  check(!ml.isError && ml.sc.leases?.length === 1 && ml.sc.leases[0].fence?.lease_id === c1.sc.fence.lease_id, 'my_leases shows the lease with its fence', ml.sc);
  const paged = await call(A.c, 'my_leases', { session_id: S, limit: 1 });
  check(!paged.isError && paged.sc.total === 1 && paged.sc.leases?.length === 1 && !paged.sc.next_cursor, 'my_leases pages (limit 1 of 1: no next_cursor)', paged.sc);
  const over = await call(A.c, 'my_leases', { session_id: S, limit: 51 });
  check(over.isError && over.sc.code === 'invalid_request', 'my_leases refuses a page over 50', over.sc.code);
  const st = await call(A.c, 'item_status', { session_id: S, item: { number: c1.sc.item.number } });
  check(!st.isError && st.sc.claimable === false && st.sc.why_code === 'already_held', 'item_status of the held item: not claimable, already_held', st.sc);
  const rel = await call(A.c, 'release', { session_id: S, fence: hb.sc.fence, request_id: randomUUID() });
  check(!rel.isError && rel.sc.success, 'release succeeds', rel.sc.code);
  const none = await call(A.c, 'my_leases', { session_id: S });
  check(!none.isError && !(none.sc.leases?.length), 'my_leases is empty after the release', none.sc);

  // ask and get_answer, then claim next again.
  const c2 = await call(A.c, 'claim', { session_id: S, next: true });
  check(!c2.isError && c2.sc.success, 'claim next again succeeds', c2.sc.code);
  const ask = await call(A.c, 'ask', { session_id: S, fence: c2.sc.fence, question: 'Which storage engine? (a judge asks)' });
  check(!ask.isError && ask.sc.success && ask.sc.clarification_id, 'ask succeeds with a clarification_id', ask.sc);
  const ga = await call(A.c, 'get_answer', { session_id: S, clarification_id: ask.sc.clarification_id });
  check(!ga.isError && ga.sc.status === 'pending' && ga.sc.marked === true, 'get_answer: pending, marked', ga.sc);

  // Point 6: after ask, item_status says not claimable, and a claim by another session is
  // refused with the same code.
  const B = await connect();
  const st2 = await call(B.c, 'item_status', { session_id: S2, item: { number: c2.sc.item.number } });
  check(st2.sc.claimable === false && st2.sc.why_code === 'awaiting_clarification', 'item_status after ask: not claimable, awaiting_clarification', st2.sc);
  const steal = await call(B.c, 'claim', { session_id: S2, item: { number: c2.sc.item.number } });
  check(steal.isError && steal.sc.code === st2.sc.why_code, "another session's claim of the asked item is refused with item_status's why_code", steal.sc);
  await B.c.close();

  // Point 3: wrong-typed and undeclared arguments are structured refusals.
  const wrong = await call(A.c, 'claim', { session_id: 5, next: true });
  check(wrong.isError && wrong.sc.code === 'invalid_request' && wrong.sc.next, 'a wrong-typed argument is refused invalid_request with next', wrong.sc);
  const undeclared = await call(A.c, 'my_leases', { session_id: S, sesion: 'x' });
  check(undeclared.isError && undeclared.sc.code === 'invalid_request', 'an undeclared argument is refused invalid_request', undeclared.sc);

  // Point 4: an unknown method is -32601 on both transports.
  let code = 0;
  try {
    await A.c.request({ method: 'steward/no-such-method', params: {} }, EmptyResultSchema);
  } catch (e) {
    code = e instanceof McpError ? e.code : -1;
  }
  check(code === -32601, 'an unknown method is answered -32601', code);

  // Point 5: a worker re-binds to its claim from a new connection with its claim token
  // (the old connection still open, as an HTTP session outlives a client that left).
  const c3 = await call(A.c, 'claim', { session_id: S, next: true });
  check(!c3.isError && c3.sc.success, 'claim next a third time succeeds', c3.sc.code);
  const C = await connect();
  if (mode === 'http') {
    const blind = await call(C.c, 'my_leases', { session_id: S });
    check(blind.isError && blind.sc.code === 'not_owner', 'a new connection without proof is refused not_owner', blind.sc);
  }
  const back = await call(C.c, 'my_leases', { session_id: S, claim_token: c3.sc.fence.claim_token });
  check(!back.isError && back.sc.leases?.[0]?.fence?.claim_token === c3.sc.fence.claim_token, 'the new connection presents the claim token and is shown the fence', back.sc);
  const hb3 = await call(C.c, 'heartbeat', { session_id: S, fence: back.sc.leases[0].fence });
  check(!hb3.isError && hb3.sc.success, 'the new connection heartbeats the claim', hb3.sc.code);
  const rel3 = await call(C.c, 'release', { session_id: S, fence: hb3.sc.fence });
  check(!rel3.isError && rel3.sc.success, 'the new connection releases the claim', rel3.sc.code);
  await C.c.close();
  await A.c.close();

  if (mode === 'http') {
    // Point 4: a request other than initialize without Mcp-Session-Id is 400 with a
    // JSON-RPC error carrying its id; a wrong token is 401.
    const post = (auth, body) => fetch(a3, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: auth }, body: JSON.stringify(body) });
    const r = await post(`Bearer ${token}`, { jsonrpc: '2.0', id: 41, method: 'tools/list' });
    const j = await r.json().catch(() => null);
    check(r.status === 400 && j?.error?.code === -32600 && j?.id === 41, 'a request without Mcp-Session-Id is 400 with a JSON-RPC error and its id', { status: r.status, j });
    const w = await post('Bearer not-the-token-0123456789', { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    check(w.status === 401, 'a wrong token is 401', w.status);
  }
  console.log(`worker ${mode}: ${checks} checks passed`);
}

main().catch((e) => {
  console.error(`FAIL ${e.message}`);
  process.exit(1);
});
