package spec

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/sluicehq/sluice/idl/dynamic"
)

// Env evaluates ${…} expressions as k3po does with JUEL, against the
// script's properties and the function libraries (see functions.go):
//
//	env := &spec.Env{Properties: map[string]any{"affinity": int64(7)}}
//	ext, err := env.EvalString(`mcp:beginEx().typeId(zilla:id("mcp")).toolsCall().name("x").build().build()`)
//
// Values are int64 (Java int and long alike; a literal beyond int64 stays a
// *big.Int, as JUEL falls back to BigInteger), float64, string, bool, nil,
// []byte, and the *dynamic.Builder and *dynamic.Matcher of the IDL function
// libraries. A builder's outermost build() yields the encoded []byte, a
// matcher's the *dynamic.Matcher, ready for Match.
//
// The zero Env is ready to use. An Env is not safe for concurrent use.
type Env struct {
	// Properties holds the script's property values and captured values,
	// by name. An identifier not in it is an error.
	Properties map[string]any
	// Labels maps a label to its id for zilla:id("name"). Nil uses a
	// table of the Env's own that assigns ids from 1 in order of first use.
	Labels func(name string) int32
	// Schema provides the IDL function libraries; nil uses
	// dynamic.Builtin().
	Schema *dynamic.Schema
	// File names the source in the positions of EvalString's errors.
	File string

	labels map[string]int32
	libs   *idlLibraries
}

// EvalError is an evaluation failure at a position. It formats as
// "file:line:col: message" and unwraps to the cause, such as a
// *dynamic.Error (so errors.Is(err, dynamic.ErrUnknownMethod) works).
type EvalError struct {
	Pos Pos
	Msg string
	Err error
}

func (e *EvalError) Error() string { return e.Pos.String() + ": " + e.Msg }

// Unwrap returns the cause, or nil.
func (e *EvalError) Unwrap() error { return e.Err }

func evalErrorf(pos Pos, cause error, format string, args ...any) *EvalError {
	return &EvalError{Pos: pos, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// EvalString parses src (the text between ${ and }) with ParseExpr, as if
// it began at line 1, column 1 of e.File, and evaluates it.
func (e *Env) EvalString(src string) (any, error) {
	x, err := ParseExpr(Pos{File: e.File, Line: 1, Col: 1}, src)
	if err != nil {
		return nil, err
	}
	return e.Eval(x)
}

// Eval evaluates x. Errors are *EvalError values carrying the position of
// the node that failed.
func (e *Env) Eval(x Expr) (any, error) {
	switch x := x.(type) {
	case *Literal:
		return x.Value, nil
	case *Ident:
		v, ok := e.Properties[x.Name]
		if !ok {
			return nil, evalErrorf(x.Pos, nil, "undefined property %s", x.Name)
		}
		return v, nil
	case *Call:
		args, err := e.evalArgs(x.Args)
		if err != nil {
			return nil, err
		}
		return e.call(x, args)
	case *MethodCall:
		recv, err := e.Eval(x.Receiver)
		if err != nil {
			return nil, err
		}
		args, err := e.evalArgs(x.Args)
		if err != nil {
			return nil, err
		}
		return e.callMethod(x, recv, args)
	case *Member:
		recv, err := e.Eval(x.Receiver)
		if err != nil {
			return nil, err
		}
		return member(x, recv)
	case *Index:
		recv, err := e.Eval(x.Receiver)
		if err != nil {
			return nil, err
		}
		idx, err := e.Eval(x.Index)
		if err != nil {
			return nil, err
		}
		return index(x, recv, idx)
	case *Unary:
		v, err := e.Eval(x.X)
		if err != nil {
			return nil, err
		}
		return unary(x, v)
	case *Binary:
		return e.binary(x)
	case *Cond:
		c, err := e.Eval(x.Cond)
		if err != nil {
			return nil, err
		}
		b, err := toBool(x.Pos, "?", c)
		if err != nil {
			return nil, err
		}
		if b {
			return e.Eval(x.Then)
		}
		return e.Eval(x.Else)
	case nil:
		return nil, errors.New("spec: Eval of a nil expression")
	}
	return nil, evalErrorf(x.Position(), nil, "cannot evaluate %T", x)
}

func (e *Env) evalArgs(xs []Expr) ([]any, error) {
	args := make([]any, len(xs))
	for i, a := range xs {
		v, err := e.Eval(a)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return args, nil
}

// callMethod applies recv.name(args): the methods of the builders and
// matchers of the IDL libraries, with the extra ones of chainHelpers, and
// Java's String methods (string_functions.go).
func (e *Env) callMethod(x *MethodCall, recv any, args []any) (any, error) {
	switch r := recv.(type) {
	case chainLink:
		if h := helperFor(r, x.Name); h != nil {
			return h(e, x, r, args)
		}
		return chainCall(x, r, args)
	case *itemAppender:
		return r.call(e, x, args)
	case string:
		return callStringMethod(x, r, args)
	}
	return nil, evalErrorf(x.Pos, nil, "cannot call method .%s on %s %s", x.Name, typeName(recv), x.Receiver)
}

func member(x *Member, recv any) (any, error) {
	if m, ok := recv.(map[string]any); ok {
		v, ok := m[x.Name]
		if !ok {
			return nil, evalErrorf(x.Pos, nil, "no property %s in %s", x.Name, x.Receiver)
		}
		return v, nil
	}
	switch recv.(type) {
	case *dynamic.Builder, *dynamic.Matcher:
		return nil, evalErrorf(x.Pos, nil, "method .%s needs parentheses: .%s()", x.Name, x.Name)
	}
	return nil, evalErrorf(x.Pos, nil, "cannot read property .%s of %s %s", x.Name, typeName(recv), x.Receiver)
}

func index(x *Index, recv, idx any) (any, error) {
	if m, ok := recv.(map[string]any); ok {
		k, ok := idx.(string)
		if !ok {
			return nil, evalErrorf(x.Index.Position(), nil, "map index must be a string, got %s", typeName(idx))
		}
		v, ok := m[k]
		if !ok {
			return nil, evalErrorf(x.Index.Position(), nil, "no key %q in %s", k, x.Receiver)
		}
		return v, nil
	}
	i, ok := idx.(int64)
	if !ok {
		return nil, evalErrorf(x.Index.Position(), nil, "index must be an integer, got %s", typeName(idx))
	}
	var n int
	switch r := recv.(type) {
	case []byte:
		n = len(r)
		if i >= 0 && i < int64(n) {
			return int64(int8(r[i])), nil // a Java byte is signed
		}
	case []any:
		n = len(r)
		if i >= 0 && i < int64(n) {
			return r[i], nil
		}
	default:
		return nil, evalErrorf(x.Pos, nil, "cannot index %s %s", typeName(recv), x.Receiver)
	}
	return nil, evalErrorf(x.Index.Position(), nil, "index %d out of range [0, %d)", i, n)
}

func unary(x *Unary, v any) (any, error) {
	switch x.Op {
	case "-":
		switch v := v.(type) {
		case int64:
			return -v, nil
		case float64:
			return -v, nil
		case *big.Int:
			return new(big.Int).Neg(v), nil
		}
		return nil, evalErrorf(x.Pos, nil, "cannot negate %s", typeName(v))
	case "!":
		b, err := toBool(x.Pos, "!", v)
		if err != nil {
			return nil, err
		}
		return !b, nil
	case "empty":
		switch v := v.(type) {
		case nil:
			return true, nil
		case string:
			return v == "", nil
		case []byte:
			return len(v) == 0, nil
		case []any:
			return len(v) == 0, nil
		case map[string]any:
			return len(v) == 0, nil
		}
		return false, nil
	}
	return nil, evalErrorf(x.Pos, nil, "unknown operator %s", x.Op)
}

// toBool coerces as EL does for boolean operands: nil is false and the
// strings "true"/"false" read as booleans.
func toBool(pos Pos, op string, v any) (bool, error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case nil:
		return false, nil
	case string:
		switch strings.ToLower(v) {
		case "true":
			return true, nil
		case "false", "":
			return false, nil
		}
	}
	return false, evalErrorf(pos, nil, "operand of %s must be a boolean, got %s", op, describeValue(v))
}

func (e *Env) binary(x *Binary) (any, error) {
	l, err := e.Eval(x.X)
	if err != nil {
		return nil, err
	}
	if x.Op == "&&" || x.Op == "||" {
		lb, err := toBool(x.Pos, x.Op, l)
		if err != nil {
			return nil, err
		}
		if lb == (x.Op == "||") {
			return lb, nil
		}
		r, err := e.Eval(x.Y)
		if err != nil {
			return nil, err
		}
		return toBool(x.Pos, x.Op, r)
	}
	r, err := e.Eval(x.Y)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case "==", "!=":
		eq, err := equal(x, l, r)
		if err != nil {
			return nil, err
		}
		return eq == (x.Op == "=="), nil
	case "<", ">", "<=", ">=":
		return compare(x, l, r)
	}
	return arith(x, l, r)
}

func equal(x *Binary, l, r any) (bool, error) {
	if l == nil || r == nil {
		return l == nil && r == nil, nil
	}
	if isNumber(l) && isNumber(r) {
		c, err := cmpNumbers(x, l, r)
		return c == 0, err
	}
	switch l := l.(type) {
	case string:
		if r, ok := r.(string); ok {
			return l == r, nil
		}
	case bool:
		if r, ok := r.(bool); ok {
			return l == r, nil
		}
	case []byte:
		if r, ok := r.([]byte); ok {
			return string(l) == string(r), nil
		}
	}
	return false, evalErrorf(x.Pos, nil, "cannot compare %s %s %s", typeName(l), x.Op, typeName(r))
}

func compare(x *Binary, l, r any) (any, error) {
	var c int
	switch {
	case isNumber(l) && isNumber(r):
		var err error
		if c, err = cmpNumbers(x, l, r); err != nil {
			return nil, err
		}
	default:
		ls, lok := l.(string)
		rs, rok := r.(string)
		if !lok || !rok {
			return nil, evalErrorf(x.Pos, nil, "cannot compare %s %s %s", typeName(l), x.Op, typeName(r))
		}
		c = strings.Compare(ls, rs)
	}
	switch x.Op {
	case "<":
		return c < 0, nil
	case ">":
		return c > 0, nil
	case "<=":
		return c <= 0, nil
	}
	return c >= 0, nil
}

func isNumber(v any) bool {
	switch v.(type) {
	case int64, float64, *big.Int:
		return true
	}
	return false
}

func cmpNumbers(x *Binary, l, r any) (int, error) {
	li, lok := l.(int64)
	ri, rok := r.(int64)
	if lok && rok {
		switch {
		case li < ri:
			return -1, nil
		case li > ri:
			return 1, nil
		}
		return 0, nil
	}
	lb, lbig := toBig(l)
	rb, rbig := toBig(r)
	if lbig && rbig {
		return lb.Cmp(rb), nil
	}
	lf, rf := toFloat(l), toFloat(r)
	switch {
	case lf < rf:
		return -1, nil
	case lf > rf:
		return 1, nil
	case lf == rf:
		return 0, nil
	}
	return 0, evalErrorf(x.Pos, nil, "cannot compare NaN")
}

func toBig(v any) (*big.Int, bool) {
	switch v := v.(type) {
	case int64:
		return big.NewInt(v), true
	case *big.Int:
		return v, true
	}
	return nil, false
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f
	}
	return 0
}

// arith applies + - * / %. As in EL, two integers give an integer (Java
// long arithmetic, wrapping on overflow) except for /, which divides as
// doubles; a float on either side gives a float.
func arith(x *Binary, l, r any) (any, error) {
	if !isNumber(l) || !isNumber(r) {
		return nil, evalErrorf(x.Pos, nil, "operands of %s must be numbers, got %s and %s", x.Op, describeValue(l), describeValue(r))
	}
	li, lok := l.(int64)
	ri, rok := r.(int64)
	if lok && rok && x.Op != "/" {
		switch x.Op {
		case "+":
			return li + ri, nil
		case "-":
			return li - ri, nil
		case "*":
			return li * ri, nil
		case "%":
			if ri == 0 {
				return nil, evalErrorf(x.Pos, nil, "division by zero")
			}
			if ri == -1 {
				return int64(0), nil
			}
			return li % ri, nil
		}
	}
	if _, ok := l.(*big.Int); ok {
		return nil, evalErrorf(x.Pos, nil, "arithmetic on %v is out of range of a long", l)
	}
	if _, ok := r.(*big.Int); ok {
		return nil, evalErrorf(x.Pos, nil, "arithmetic on %v is out of range of a long", r)
	}
	lf, rf := toFloat(l), toFloat(r)
	switch x.Op {
	case "+":
		return lf + rf, nil
	case "-":
		return lf - rf, nil
	case "*":
		return lf * rf, nil
	case "/":
		return lf / rf, nil
	case "%":
		return math.Mod(lf, rf), nil // Java's % on doubles
	}
	return nil, evalErrorf(x.Pos, nil, "unknown operator %s", x.Op)
}

// typeName names a value's type in the terms of the script language.
func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case int64, *big.Int:
		return "integer"
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []byte:
		return "bytes"
	case []any:
		return "list"
	case map[string]any:
		return "map"
	case *dynamic.Builder:
		return v.Path() + " builder"
	case *dynamic.Matcher:
		return v.Path() + " matcher"
	case *itemAppender:
		return v.path + " items"
	}
	return fmt.Sprintf("%T", v)
}

// describeValue names a value's type and, for scalars, the value.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", shortenValue(v))
	case int64, float64, bool, *big.Int:
		return fmt.Sprintf("%s %v", typeName(v), v)
	}
	return typeName(v)
}

func shortenValue(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

func argList(args []any) string {
	parts := make([]string, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case nil:
			parts[i] = "null"
		case string:
			parts[i] = fmt.Sprintf("%q", shortenValue(a))
		case []byte:
			parts[i] = fmt.Sprintf("bytes[%d]", len(a))
		case int64, float64, bool, *big.Int:
			parts[i] = fmt.Sprint(a)
		default:
			parts[i] = typeName(a)
		}
	}
	return strings.Join(parts, ", ")
}
