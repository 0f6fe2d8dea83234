package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// toolsModel is options.tools in Zilla's shape: the model tool arguments
// are checked with (json) and the catalog its schemas come from. The one
// strategy Sluice serves is tool: a tool's schema is the inputSchema of
// the cached tools list.
type toolsModel struct {
	Model   string                  `yaml:"model"`
	Catalog map[string][]catalogRef `yaml:"catalog"`
}

type catalogRef struct {
	Strategy string `yaml:"strategy"`
	Subject  string `yaml:"subject"`
	ID       *int   `yaml:"id"`
	Version  string `yaml:"version"`
}

// compileModel checks options.tools: it needs options.cache with the
// tools list cached, and a catalog the namespace declares, read with
// strategy tool.
func compileModel(e *engine.Engine, cfg *engine.BindingConfig, m *toolsModel, cache *cacheConfig) error {
	raw := cfg.Options()
	fail := func(where, format string, args ...any) error {
		return fmt.Errorf("%w: %s: mcp %s: %s", ErrConfig, where, cfg.Name, fmt.Sprintf(format, args...))
	}
	where := raw.Where("tools")
	if len(m.Catalog) == 0 {
		return fail(where, "options.tools needs catalog: {<catalog>: [{strategy: tool}]}, the schemas it checks arguments with")
	}
	for name, refs := range m.Catalog {
		cw := raw.Where("tools", "catalog", name)
		if !e.Catalog(name) {
			return fail(cw, "no catalog named %q", name)
		}
		for _, ref := range refs {
			switch {
			case ref.Subject != "" || ref.ID != nil || ref.Version != "":
				return fail(cw, "a catalog's own schemas (subject, id, version) are not supported yet; strategy tool checks arguments with the cached tools' inputSchema")
			case ref.Strategy != "tool":
				return fail(cw, "strategy %q: want tool", ref.Strategy)
			}
		}
	}
	if cache == nil || cache.kindIndex(mcp.McpBeginExKindToolsList) < 0 {
		return fail(where, "options.tools needs the tools list cached (options.cache): strategy tool reads the tools' inputSchema there")
	}
	return nil
}

// metricInvalidArguments counts the calls refused by their arguments.
const metricInvalidArguments = "mcp.proxy.invalid.arguments"

func init() {
	telemetry.Describe(metricInvalidArguments, telemetry.KindCounter, telemetry.UnitNone,
		"The number of tools/call requests refused because their arguments failed the tool's inputSchema.")
}

// invalidArguments returns the worker's counter of refused arguments,
// looked up on first use.
func (h *Handler) invalidArguments() *telemetry.Counter {
	if h.invalidArgs == nil {
		h.invalidArgs = h.w.Metrics().Counter(metricInvalidArguments, telemetry.MustLabels("namespace", h.namespace, "binding", h.name))
	}
	return h.invalidArgs
}

// Bounds of argument checking.
const (
	// maxSchemaError bounds the text of a failed check in the -32602
	// answer.
	maxSchemaError = 256
)

// schemaOf returns the compiled inputSchema of tool i, compiling it on
// first use; nil when the tool has none, or it does not compile (logged
// once), so that its calls go to the upstream unchecked. Compiling reads
// nothing but the schema itself: a $ref outside it fails.
func (c *catalog) schemaOf(i int32, log func(name string, err error)) *jsonschema.Schema {
	t := &c.tools[i]
	if t.schemaDone {
		return t.schema
	}
	t.schemaDone = true
	ss, se, ok := member(t.item, "inputSchema")
	if !ok || t.item[ss] != '{' {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.item[ss:se]))
	if err == nil {
		comp := jsonschema.NewCompiler()
		comp.UseLoader(jsonschema.SchemeURLLoader{})
		url := "urn:sluice:tool:" + strconv.Itoa(int(i))
		if err = comp.AddResource(url, doc); err == nil {
			t.schema, err = comp.Compile(url)
		}
	}
	if err != nil {
		log(t.name, err)
		t.schema = nil
	}
	return t.schema
}

// argumentsValid checks the arguments of a tools/call of name against
// the tool's inputSchema in the cached tools list, answering -32602 when
// they fail it. A tool the cache does not hold, or one without a usable
// schema, is not checked: its upstream judges.
func (r *request) argumentsValid(name []byte) bool {
	h := r.h
	c := h.cache.catalog()
	i, ok := c.byName[string(name)]
	if !ok {
		return true
	}
	sch := c.schemaOf(i, func(tool string, err error) {
		h.log.Warn("tool's inputSchema does not compile: its calls go unchecked", "tool", tool, "error", firstLine(err.Error()))
	})
	if sch == nil {
		return true
	}
	args := []byte("{}")
	if as, ae, ok := member(r.params, "arguments"); ok {
		args = r.params[as:ae]
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err == nil {
		err = sch.Validate(inst)
	}
	if err == nil {
		return true
	}
	h.invalidArguments().Add(1)
	msg := append(h.scratch[:0], "Invalid params: "...)
	msg = append(msg, schemaFailure(err)...)
	if len(msg) > maxSchemaError {
		msg = append(msg[:maxSchemaError-3], "..."...)
	}
	h.scratch = msg
	r.respondError(jsonrpc.CodeInvalidParams, msg, nil, nil)
	return false
}

// schemaFailure says where and why arguments failed their schema: the
// first failing keyword of the check, or what kept them from being read.
func schemaFailure(err error) string {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return "arguments are not JSON"
	}
	out := verr.BasicOutput()
	for _, u := range out.Errors {
		if u.Error != nil {
			at := u.InstanceLocation
			if at == "" {
				at = "/"
			}
			return "arguments" + strings.TrimSuffix(at, "/") + ": " + u.Error.String()
		}
	}
	return firstLine(err.Error())
}

// firstLine returns s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
