package config

import (
	"strconv"
)

// The binding kinds of the base schema (Zilla's KindConfig).
const (
	KindClient       = "client"
	KindServer       = "server"
	KindProxy        = "proxy"
	KindRemoteClient = "remote_client"
	KindRemoteServer = "remote_server"
	KindCacheClient  = "cache_client"
	KindCacheServer  = "cache_server"
)

// SysPrefix marks an exit that names a built-in system binding, such as
// sys:http_client, rather than a binding of the file.
const SysPrefix = "sys:"

// Pos is a position in a configuration file. Line and Col count from 1.
type Pos struct {
	File string
	Line int
	Col  int
}

// String returns file:line.
func (p Pos) String() string { return p.File + ":" + strconv.Itoa(p.Line) }

// Config is one loaded namespace: a sluice.yaml (Zilla's zilla.yaml).
type Config struct {
	// Name is the namespace.
	Name string
	// Bindings are in file order.
	Bindings []*Binding
	// Guards, Stores and Vaults are in file order.
	Guards []*Component
	Stores []*Component
	Vaults []*Component
	// Catalogs are Zilla's schema catalogs, in file order: names a
	// binding's model may refer to (the mcp proxy's strategy tool).
	Catalogs []*Component
	// Telemetry holds the namespace's attributes, metrics and exporters.
	Telemetry Telemetry
	// File is the name the configuration was loaded under.
	File string
}

// Binding returns the binding called name, or nil.
func (c *Config) Binding(name string) *Binding { return find(c.Bindings, name) }

// Guard returns the guard called name, or nil.
func (c *Config) Guard(name string) *Component { return findComponent(c.Guards, name) }

// Store returns the store called name, or nil.
func (c *Config) Store(name string) *Component { return findComponent(c.Stores, name) }

// Catalog returns the catalog called name, or nil.
func (c *Config) Catalog(name string) *Component { return findComponent(c.Catalogs, name) }

// Vault returns the vault called name, or nil.
func (c *Config) Vault(name string) *Component { return findComponent(c.Vaults, name) }

func find(bindings []*Binding, name string) *Binding {
	for _, b := range bindings {
		if b.Name == name {
			return b
		}
	}
	return nil
}

func findComponent(cs []*Component, name string) *Component {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Binding is one entry of bindings.
type Binding struct {
	Name string
	Type string
	Kind string
	// Entry is set only on remote_client and remote_server bindings.
	Entry string
	// Exit is the default route: a binding of the file, or sys:<name>.
	Exit  string
	Vault string
	// Options is nil when the binding has none; the binding decodes it
	// with [Raw.Decode].
	Options *Raw
	// Routes are in file order; the first whose conditions match wins.
	Routes    []*Route
	Telemetry Telemetry
	Pos       Pos
}

// Route is one entry of a binding's routes.
type Route struct {
	Exit string
	// When holds the conditions, each decoded by the binding; a route
	// without conditions matches everything.
	When []*Raw
	// With is nil when the route has none.
	With *Raw
	// Guarded maps a guard name to the roles the route requires.
	Guarded map[string][]string
	Pos     Pos
}

// Component is a guard, store, vault or telemetry exporter.
type Component struct {
	Name string
	Type string
	// Kind is a guard's optional kind.
	Kind string
	// Store is the store a guard keeps its state in, if any.
	Store string
	// Vault is the vault an exporter reads secrets from, if any.
	Vault   string
	Options *Raw
	Pos     Pos
}

// Telemetry is the namespace's telemetry block, or a binding's (which has
// no exporters).
type Telemetry struct {
	Attributes map[string]string
	Metrics    []string
	Exporters  []*Component
}
