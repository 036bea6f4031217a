// Package config reads steward's configuration file ($XDG_CONFIG_HOME/steward/config.yaml)
// and resolves every setting from, in order of precedence, a command-line flag, the
// environment, the file, and the built-in default — remembering where each value came
// from so that `steward config check` can say so.
//
// The role and the read-only switch are not plain settings: the configured grant is a
// ceiling (Grant). A flag or variable may lower the role or turn read-only on, never the
// reverse, and the system-wide files (SystemPath, a build-time default, plus any file
// STEWARD_SYSTEM_CONFIG adds) bound every user file, variable and flag.
//
// What it owns: the file's schema (workspaces with their locks directory, DB path,
// repository root, audit log and Gitea login or tea login name; marker labels; the
// clarification SLA; thresholds; roles per Gitea user; theme; read_only), the precedence
// rules, validation (Problems, as data), and creating a new file with mode 0600.
//
// What it must never do: print, log or return a token in any message or rendered value
// (Setting.Display hides secrets; Problems never quote values of secret keys), write
// anything but a new config file the user asked for, or import any other steward package.
package config
