package gitea

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Environment variables naming an explicit login (both must be set to be used).
const (
	EnvURL   = "STEWARD_GITEA_URL"
	EnvToken = "STEWARD_GITEA_TOKEN"
)

// errNoLogin is returned by LoadLogin when neither an explicit URL and token nor a usable tea
// login exists.
var errNoLogin = errors.New("gitea: no login: set STEWARD_GITEA_URL and STEWARD_GITEA_TOKEN or configure a tea login")

// errLoginNotFound is returned by LoadLogin when a login was asked for by name and the tea
// config has none of that name.
var errLoginNotFound = errors.New("gitea: tea login not found")

// Login is where and as whom steward talks to Gitea.
type Login struct {
	Name     string // tea login name, or "env"/"explicit"
	URL      string // base URL, e.g. http://127.0.0.1:3000
	Token    Token  // never printed
	User     string // login name of the token's owner, when the config says
	Insecure bool   // skip TLS verification (tea's "insecure")
	Source   string // the config file path, or "env" / "explicit"
}

// Warning is a non-fatal finding about a login, returned as data for the status line.
type Warning struct {
	Code    string // stable code, e.g. "config-permissions"
	Message string // human text; never contains the token
}

// LoginOptions selects a login. Zero value: environment first, then the default tea login.
type LoginOptions struct {
	Name       string              // tea login name; empty selects the default one
	URL        string              // explicit URL (used with Token, before env and tea)
	Token      string              // explicit token
	ConfigPath string              // tea config path; empty uses XDG_CONFIG_HOME or ~/.config
	Getenv     func(string) string // defaults to os.Getenv
}

type teaConfig struct {
	Logins []teaLogin `yaml:"logins"`
}

type teaLogin struct {
	Name     string `yaml:"name"`
	URL      string `yaml:"url"`
	Token    string `yaml:"token"`
	Default  bool   `yaml:"default"`
	User     string `yaml:"user"`
	Insecure bool   `yaml:"insecure"`
}

// teaConfigPath returns the tea CLI config path: $XDG_CONFIG_HOME/tea/config.yml, else
// ~/.config/tea/config.yml.
func teaConfigPath(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "tea", "config.yml")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "tea", "config.yml")
}

// LoadLogin picks a login: explicit options, then STEWARD_GITEA_URL/STEWARD_GITEA_TOKEN
// (unless a tea login is asked for by name), then the tea config (by name, else the one marked
// default, else the only one). Warnings (e.g. a token file readable by others) are returned as
// data. Errors never contain the token.
func LoadLogin(o LoginOptions) (Login, []Warning, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if o.URL != "" && o.Token != "" {
		return Login{Name: "explicit", URL: o.URL, Token: NewToken(o.Token), Source: "explicit"}, nil, nil
	}
	if o.Name == "" {
		if u, t := getenv(EnvURL), getenv(EnvToken); u != "" && t != "" {
			return Login{Name: "env", URL: u, Token: NewToken(t), Source: "env"}, nil, nil
		}
	}
	path := o.ConfigPath
	if path == "" {
		path = teaConfigPath(getenv)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Login{}, nil, errNoLogin
	}
	if err != nil {
		return Login{}, nil, fmt.Errorf("gitea: read tea config %s: %w", path, errors.Unwrap(err))
	}
	var cfg teaConfig
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		// yaml errors quote line numbers, not values; still, keep only a generic message.
		return Login{}, nil, fmt.Errorf("gitea: parse tea config %s: malformed YAML", path)
	}
	var warnings []Warning
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 && hasToken(cfg) {
		warnings = append(warnings, Warning{Code: "config-permissions", Message: fmt.Sprintf(
			"%s holds a token and is readable by group or others (mode %#o); run chmod 600 on it",
			path, st.Mode().Perm())})
	}
	l, ok := pickLogin(cfg, o.Name)
	if !ok {
		if o.Name != "" {
			return Login{}, warnings, fmt.Errorf("%w: %q in %s", errLoginNotFound, o.Name, path)
		}
		return Login{}, warnings, errNoLogin
	}
	if l.Insecure {
		warnings = append(
			warnings,
			Warning{Code: "insecure-tls", Message: fmt.Sprintf("login %q skips TLS verification", l.Name)},
		)
	}
	return Login{Name: l.Name, URL: strings.TrimSuffix(l.URL, "/"), Token: NewToken(l.Token), User: l.User,
		Insecure: l.Insecure, Source: path}, warnings, nil
}

func hasToken(cfg teaConfig) bool {
	for _, l := range cfg.Logins {
		if l.Token != "" {
			return true
		}
	}
	return false
}

func pickLogin(cfg teaConfig, name string) (teaLogin, bool) {
	for _, l := range cfg.Logins {
		if name != "" && l.Name == name {
			return l, true
		}
	}
	if name != "" {
		return teaLogin{}, false
	}
	for _, l := range cfg.Logins {
		if l.Default {
			return l, true
		}
	}
	if len(cfg.Logins) == 1 {
		return cfg.Logins[0], true
	}
	return teaLogin{}, false
}
