package idl

import (
	"embed"
	"sync"
)

// builtinFS holds Sluice's own IDL files, the sources of the generated
// flyweights in engine/frame, engine/frame/proxy, binding/http and
// binding/mcp.
//
//go:embed core.idl http.idl mcp.idl proxy.idl
var builtinFS embed.FS

// builtinNames lists the embedded files in the order they are checked.
var builtinNames = []string{"core.idl", "http.idl", "mcp.idl", "proxy.idl"}

var builtin = sync.OnceValues(func() ([]*File, error) {
	files := make([]*File, 0, len(builtinNames))
	for _, name := range builtinNames {
		src, err := builtinFS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := Parse("idl/"+name, src)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if err := Check(files...); err != nil {
		return nil, err
	}
	return files, nil
})

// Builtin returns the embedded core.idl, http.idl, mcp.idl and proxy.idl,
// parsed and checked together. They are parsed once; every call returns
// the same files, which callers must treat as read-only (in particular,
// they must not Check them again while others read them).
func Builtin() ([]*File, error) {
	files, err := builtin()
	if err != nil {
		return nil, err
	}
	return append([]*File(nil), files...), nil
}
