package spec

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/sluicehq/sluice/idl"
	"github.com/sluicehq/sluice/idl/dynamic"
)

// The builders and matchers of the IDL libraries take the methods that
// package dynamic derives from the IDL (a field, a case, an array's
// singular). Zilla's hand-written function classes add a few methods whose
// shape the IDL does not give; those are listed here, per IDL type, so
// that scripts read as they do under Zilla:
//
//   - proxy:beginEx().addressInet() (and addressInet4, addressInet6,
//     addressUnix, addressNone) opens the address union's case in one step;
//     its build() returns to the beginEx.
//   - proxy:beginEx().info() starts a run of infos in which every method
//     appends one ProxyInfo item: info().alpn("h2").authority("a").build()
//     appends two; secure() starts a run of SECURE items in the same way
//     (secure().version("TLSv1.3").cipher("…").build()). A matcher checks
//     that each item given is present, as Zilla's does.
//   - protocol("stream") on an address takes the protocol name in any case,
//     and source/destination of addressInet4, addressInet6 and addressUnix
//     take text: an IP address (or a host name, resolved as Java's
//     InetAddress.getByName does) or a socket path padded to 108 bytes.
//   - mcp:beginEx().lifecycle().capabilities("CLIENT_ELICITATION", …) takes
//     McpCapabilities names and sets their bits; an integer sets the field
//     as is.
//
// Matchers of every type also take <singular>Missing(…) (see package
// dynamic): http:matchBeginEx().headerMissing("alt-svc").
type chainHelper func(e *Env, x *MethodCall, recv chainLink, args []any) (any, error)

// chainLink is a *dynamic.Builder or *dynamic.Matcher.
type chainLink interface {
	Call(method string, args ...any) (any, error)
	Path() string
	Type() idl.Type
}

// chainHelpers maps a qualified IDL type name to its extra methods.
var chainHelpers = map[string]map[string]chainHelper{
	"proxy::stream::ProxyBeginEx": {
		"addressInet":  openCase("address", "inet"),
		"addressInet4": openCase("address", "inet4"),
		"addressInet6": openCase("address", "inet6"),
		"addressUnix":  openCase("address", "unix"),
		"addressNone":  openCase("address", "none"),
		"info":         startItems(&itemRun{open: []string{"info"}, nested: map[string]*itemRun{"secure": {open: []string{"info", "secure"}}}}),
	},
	"proxy::ProxyAddressInet":  {"protocol": upperEnum},
	"proxy::ProxyAddressInet4": {"protocol": upperEnum, "source": inetAddress(4), "destination": inetAddress(4)},
	"proxy::ProxyAddressInet6": {"protocol": upperEnum, "source": inetAddress(16), "destination": inetAddress(16)},
	"proxy::ProxyAddressUnix":  {"protocol": upperEnum, "source": unixPath, "destination": unixPath},
	"mcp::stream::McpLifecycleBeginEx": {
		"capabilities": enumFlags("mcp::McpCapabilities"),
	},
}

// helperFor returns the extra method name of recv's type, if it has one.
func helperFor(recv chainLink, name string) chainHelper {
	d, ok := recv.Type().(idl.Decl)
	if !ok {
		return nil
	}
	return chainHelpers[idl.QualifiedName(d)][name]
}

// openCase opens methods in one step, as Open does.
func openCase(methods ...string) chainHelper {
	return func(_ *Env, x *MethodCall, recv chainLink, args []any) (any, error) {
		if len(args) != 0 {
			return nil, evalErrorf(x.Pos, nil, ".%s takes no arguments, got %d", x.Name, len(args))
		}
		var (
			v   any
			err error
		)
		switch r := recv.(type) {
		case *dynamic.Builder:
			v, err = r.Open(methods...)
		case *dynamic.Matcher:
			v, err = r.Open(methods...)
		}
		if err != nil {
			return nil, evalErrorf(x.Pos, err, ".%s() on %s: %v", x.Name, recv.Path(), err)
		}
		return v, nil
	}
}

// upperEnum passes an enum constant's name upper-cased, as Zilla's
// ProxyAddressProtocol.valueOf(protocol.toUpperCase()).
func upperEnum(_ *Env, x *MethodCall, recv chainLink, args []any) (any, error) {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			args = []any{strings.ToUpper(s)}
		}
	}
	return chainCall(x, recv, args)
}

// inetAddress takes an address as text for an octets[size] field.
func inetAddress(size int) chainHelper {
	return func(_ *Env, x *MethodCall, recv chainLink, args []any) (any, error) {
		if len(args) != 1 {
			return chainCall(x, recv, args)
		}
		host, ok := args[0].(string)
		if !ok {
			return chainCall(x, recv, args)
		}
		ip, err := resolveIP(host, size)
		if err != nil {
			return nil, evalErrorf(x.Args[0].Position(), err, ".%s(%q) on %s: %v", x.Name, host, recv.Path(), err)
		}
		return chainCall(x, recv, []any{ip})
	}
}

// resolveIP returns host as size (4 or 16) bytes: an IP literal, or the
// first address of that family a name resolves to.
func resolveIP(host string, size int) ([]byte, error) {
	family := "IPv4"
	if size == 16 {
		family = "IPv6"
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if size == 4 && !a.Is4() || size == 16 && !a.Is6() {
			return nil, fmt.Errorf("%s is not an %s address", host, family)
		}
		return a.AsSlice(), nil
	}
	addrs, err := net.LookupIP(host)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve %s: %w", host, err)
	}
	for _, a := range addrs {
		if size == 4 && a.To4() != nil {
			return a.To4(), nil
		}
		if size == 16 && a.To4() == nil {
			return a.To16(), nil
		}
	}
	return nil, fmt.Errorf("%s has no %s address", host, family)
}

// unixPathSize is the size of sun_path, the octets of ProxyAddressUnix.
const unixPathSize = 108

// unixPath takes a socket path as text, zero-padded to 108 bytes.
func unixPath(_ *Env, x *MethodCall, recv chainLink, args []any) (any, error) {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			if len(s) > unixPathSize {
				return nil, evalErrorf(x.Args[0].Position(), nil, ".%s: a socket path of %d bytes is longer than %d", x.Name, len(s), unixPathSize)
			}
			b := make([]byte, unixPathSize)
			copy(b, s)
			args = []any{b}
		}
	}
	return chainCall(x, recv, args)
}

// enumFlags takes constant names of the enum named enum and sets the OR
// of their values, as Zilla's capabilities(String... names).
func enumFlags(enum string) chainHelper {
	return func(e *Env, x *MethodCall, recv chainLink, args []any) (any, error) {
		if len(args) == 1 {
			if _, ok := args[0].(string); !ok {
				return chainCall(x, recv, args)
			}
		}
		libs, err := e.libraries()
		if err != nil {
			return nil, evalErrorf(x.Pos, err, "loading the IDL schema: %v", err)
		}
		t, _ := libs.schema.Lookup(enum)
		en, ok := t.(*idl.Enum)
		if !ok {
			return nil, evalErrorf(x.Pos, nil, ".%s: the schema has no enum %s", x.Name, enum)
		}
		var bits int64
		for i, a := range args {
			name, ok := a.(string)
			if !ok {
				return nil, evalErrorf(x.Args[i].Position(), nil, ".%s: argument %d must be a constant of %s, got %s", x.Name, i+1, en.Name, describeValue(a))
			}
			v, ok := en.Lookup(name)
			if !ok {
				return nil, evalErrorf(x.Args[i].Position(), nil, ".%s: %q is not a constant of %s (%s)", x.Name, name, en.Name, enumConstants(en))
			}
			bits |= v.Value
		}
		return chainCall(x, recv, []any{bits})
	}
}

func enumConstants(en *idl.Enum) string {
	names := make([]string, len(en.Values))
	for i, v := range en.Values {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

// chainCall applies the IDL's own method x.Name to recv.
func chainCall(x *MethodCall, recv chainLink, args []any) (any, error) {
	res, err := recv.Call(x.Name, args...)
	if err != nil {
		return nil, chainError(x, recv, args, err)
	}
	return res, nil
}

// chainError reports err from calling x on recv.
func chainError(x *MethodCall, recv chainLink, args []any, err error) error {
	what := typeName(recv)
	if errors.Is(err, dynamic.ErrUnknownMethod) {
		// Keep the list of methods dynamic gives, not its restatement
		// of the name.
		msg := err.Error()
		if i := strings.Index(msg, "(methods:"); i >= 0 {
			msg = msg[i:]
		}
		return evalErrorf(x.Pos, err, "unknown method .%s on %s %s", x.Name, what, msg)
	}
	return evalErrorf(x.Pos, err, ".%s(%s) on %s: %v", x.Name, argList(args), what, err)
}

// itemRun describes a run of items: every method call appends one item
// to an array, opened from the run's owner by the methods of open (the
// array's singular, then cases to select), and applies the method to it.
// A method named in nested starts an inner run instead.
type itemRun struct {
	open   []string
	nested map[string]*itemRun
}

// itemAppender is a run in progress: build() returns to back, the
// builder or matcher (or outer run) the run was started from.
type itemAppender struct {
	run   *itemRun
	owner chainLink // the builder or matcher items are appended to
	back  any       // what build() returns
	path  string
}

func startItems(run *itemRun) chainHelper {
	return func(_ *Env, x *MethodCall, recv chainLink, args []any) (any, error) {
		if len(args) != 0 {
			return nil, evalErrorf(x.Pos, nil, ".%s takes no arguments, got %d", x.Name, len(args))
		}
		return &itemAppender{run: run, owner: recv, back: recv, path: recv.Path() + "." + x.Name + "()"}, nil
	}
}

// call appends an item for x, or starts a nested run, or ends the run.
func (a *itemAppender) call(e *Env, x *MethodCall, args []any) (any, error) {
	if x.Name == "build" {
		if len(args) != 0 {
			return nil, evalErrorf(x.Pos, nil, ".build takes no arguments, got %d", len(args))
		}
		return a.back, nil
	}
	if inner, ok := a.run.nested[x.Name]; ok && len(args) == 0 {
		return &itemAppender{run: inner, owner: a.owner, back: a, path: a.path + "." + x.Name + "()"}, nil
	}
	var link chainLink = a.owner
	for _, m := range a.run.open {
		v, err := link.Call(m)
		if err != nil {
			return nil, chainError(x, link, nil, err)
		}
		next, ok := v.(chainLink)
		if !ok {
			return nil, evalErrorf(x.Pos, nil, "%s: %s() opens no item", a.path, m)
		}
		link = next
	}
	if h := helperFor(link, x.Name); h != nil {
		if _, err := h(e, x, link, args); err != nil {
			return nil, err
		}
		return a, nil
	}
	v, err := link.Call(x.Name, args...)
	if err != nil {
		return nil, chainError(x, link, args, err)
	}
	if v != link {
		return nil, evalErrorf(x.Pos, nil, "%s: .%s(%s) takes a value here", a.path, x.Name, argList(args))
	}
	return a, nil
}
