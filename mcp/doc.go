// Package mcp is `steward mcp`: the worker tools of the governed core served over the Model
// Context Protocol (the official Go SDK), so LLM workers claim, heartbeat, release and ask
// through the same fenced, audited path as the command line.
//
// What it owns: the tools' names, arguments, results and annotations (docs/mcp.md); their
// adaptation to govern requests (each mutating tool is one Core.Run, as the CLI's commands
// are); the claim token every claim is bound to (minted here, returned to the claiming
// connection alone, checked by the core on every later call); the binding of a worker
// session to the connection, and over stdio the process, that used it first; structured
// results for refusals and unknown outcomes (code, message, what to do next) — never
// protocol errors; the read-only tools (my_leases, item_status, inspect_lock_contract,
// get_answer) over the sources' read APIs, which show a claim's fence only to a connection
// that proves it; the stdio transport, which answers a line that is not a JSON-RPC message
// with a JSON-RPC error and keeps serving, and the streamable HTTP transport, bound to
// loopback unless a bearer token read from a file guards it; and the typed client the
// demo's MCP workers use.
//
// What it must never do: decide anything an action decides (guards, fences and refusals are
// the core's), retry a refused or unknown mutation, expose a supervisor action, write a
// source except through govern, take a token from the command line or write one anywhere,
// or show a claim token to any connection but the one that holds it.
package mcp
