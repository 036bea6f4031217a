// Package app assembles a workspace session: the one place where steward's parts are put
// together for a surface. Open builds, from Settings (FromConfig maps every key of the
// resolved configuration onto them), the Gitea client (its marker and blocked labels), the
// governed core, the live model (every threshold, the lease-policy overrides of
// GITEA_LEASE_POLICY_*, the legacy single-slot lock, a PostgreSQL DB's password file), the
// snapshot source the surfaces read (each snapshot's orphan actions previewed by the core,
// steward's own secrets redacted), and the workbench's options (the SLAs and notifications
// of attention, the theme, the History view). `steward ui`, `steward status` (and --watch),
// `steward watch` and the demo's workbench call Open; the commands that need only a core
// (the actions, `steward audit`, `steward mcp`) call NewCore with the same Settings;
// nothing else wires these parts.
//
// It owns the wiring and nothing else: no classification (model), no mutation (govern),
// no drawing (tui). It must never read a setting anywhere but from Settings, and never
// show a configured source it could not set up as "not configured": a Gitea that was
// configured and could not be reached or set up is unavailable, with the reason.
package app
