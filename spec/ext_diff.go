package spec

import "errors"

// builtType returns the qualified IDL type that x builds when x is a
// method chain that starts at a builder function of the IDL libraries,
// such as http:beginEx()….build(); otherwise "".
func (e *Env) builtType(x Expr) string {
	for {
		m, ok := x.(*MethodCall)
		if !ok {
			break
		}
		x = m.Receiver
	}
	c, ok := x.(*Call)
	if !ok {
		return ""
	}
	libs, err := e.libraries()
	if err != nil {
		return ""
	}
	f, ok := libs.funcs[c.Namespace][c.Name]
	if !ok || f.matcher {
		return ""
	}
	return f.typeName
}

// diffExt explains why want, the extension the expression x built,
// differs from the observed ext: when x names its IDL type, both are
// decoded and the error names the first field that differs
// (HttpBeginEx.headers[2].name: expected ":path", observed ":authority"),
// and typ is that type, for describing the observed frame.
func (sr *scriptRun) diffExt(x Expr, want, ext []byte) (typ string, err error) {
	sr.lock()
	typ = sr.env.builtType(x)
	sr.unlock()
	if typ == "" || sr.schema == nil {
		return "", errors.New("bytes differ")
	}
	if err := sr.schema.Diff(typ, want, ext); err != nil {
		return typ, err
	}
	return typ, errors.New("bytes differ")
}

// formatBuilt renders want, the extension the expression x built, decoded
// by its IDL type when x names one, and in hex otherwise.
func (sr *scriptRun) formatBuilt(x Expr, want []byte) string {
	sr.lock()
	typ := sr.env.builtType(x)
	sr.unlock()
	if typ == "" || sr.schema == nil {
		return hexString(want)
	}
	return sr.schema.Format(typ, want)
}
