//go:build tools

package deps

import (
	_ "charm.land/bubbles/v2/table"
	_ "charm.land/bubbles/v2/textarea"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/glamour/v2"
	_ "charm.land/lipgloss/v2"
	_ "code.gitea.io/sdk/gitea"
	_ "github.com/charmbracelet/x/exp/teatest/v2"
	_ "github.com/charmbracelet/x/vt"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
	_ "go.yaml.in/yaml/v3"
	_ "modernc.org/sqlite"
)
