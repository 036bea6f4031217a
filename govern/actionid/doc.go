// Package actionid is the one table of the governed core's action ids: every id an action
// is registered under, named once, for every package that names an action (the core, the
// model's orphans, history's categories, the command line, the workbench, the MCP server).
//
// It owns the ids and their order and nothing else. It is a pure leaf: it imports nothing,
// does no IO and never decides what an action does — that is package govern, whose
// registry a test holds equal to this table (TestRegistryIsTheTableOfIDs).
package actionid
