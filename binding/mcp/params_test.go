package mcp

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

func TestAppendParamValue(t *testing.T) {
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	tests := []struct {
		raw  string
		want string
		ok   bool
	}{
		{`"us-west1"`, "us-west1", true},
		{`"Hello World"`, "Hello World", true},
		{`""`, "", true},
		{`"日本語"`, b64("日本語"), true},
		{`"caf\u00e9"`, b64("café"), true},
		{`" lead"`, b64(" lead"), true},
		{`"trail\t"`, b64("trail\t"), true},
		{`"a\r\nb"`, b64("a\r\nb"), true},
		{`"tab\tin"`, b64("tab\tin"), true},
		{`"=?base64?SGVsbG8=?="`, b64("=?base64?SGVsbG8=?="), true},
		{`"=?base64?x"`, "=?base64?x", true},
		{`42`, "42", true},
		{`-7`, "-7", true},
		{`3.0`, "3", true},
		{`1e2`, "100", true},
		{`9007199254740991`, "9007199254740991", true},
		{`9007199254740992`, "", false},
		{`3.5`, "", false},
		{`true`, "true", true},
		{`false`, "false", true},
		{`null`, "", false},
		{`{"a":1}`, "", false},
		{`[1]`, "", false},
		{` "x" `, "x", true},
	}
	for _, tc := range tests {
		got, ok := AppendParamValue([]byte("pre:"), []byte(tc.raw))
		if ok != tc.ok || ok && string(got) != "pre:"+tc.want || !ok && string(got) != "pre:" {
			t.Errorf("AppendParamValue(%s) = %q, %v; want %q, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDecodeParamValue(t *testing.T) {
	tests := []struct {
		v, want string
		ok      bool
	}{
		{"us-west1", "us-west1", true},
		{"", "", true},
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{"=?base64?5pel5pys6Kqe?=", "日本語", true},
		{"=?base64??=", "", true},
		{"=?base64?SGVsbG8?=", "", false},     // no padding
		{"=?base64?SGVs!!!bG8=?=", "", false}, // not the alphabet
		{"=?base64?SGVs\nbG8=?=", "", false},
		{"SGVsbG8=", "SGVsbG8=", true},                   // no wrapper: literal
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true}, // no suffix: literal
		{"=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=", true},
		{"=?base64?=", "=?base64?=", true},
	}
	for _, tc := range tests {
		got, ok := DecodeParamValue([]byte("pre:"), []byte(tc.v))
		if ok != tc.ok || ok && string(got) != "pre:"+tc.want {
			t.Errorf("DecodeParamValue(%q) = %q, %v; want %q, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParamMatches(t *testing.T) {
	tests := []struct {
		decoded, raw     string
		match, primitive bool
	}{
		{"us-west1", `"us-west1"`, true, true},
		{"us-east1", `"us-west1"`, false, true},
		{"café", `"caf\u00e9"`, true, true},
		{"42", `42`, true, true},
		{"42.0", `42`, true, true},
		{"43", `42`, false, true},
		{"x", `42`, false, true},
		{"true", `true`, true, true},
		{"True", `true`, false, true},
		{"1.5", `1.5`, false, false},
		{"x", `{"a":1}`, false, false},
		{"x", `null`, false, false},
	}
	for _, tc := range tests {
		m, p := ParamMatches([]byte(tc.decoded), []byte(tc.raw))
		if m != tc.match || p != tc.primitive {
			t.Errorf("ParamMatches(%q, %s) = %v, %v; want %v, %v", tc.decoded, tc.raw, m, p, tc.match, tc.primitive)
		}
	}
}

func TestScanParamHeaders(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []ParamHeader
		ok     bool
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, nil, true},
		{"no properties", `{"type":"object"}`, nil, true},
		{"one", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer"}}}`,
			[]ParamHeader{{Name: "Region", Header: "mcp-param-region", Path: []string{"region"}}}, true},
		{"schema order", `{"properties":{"b":{"type":"boolean","x-mcp-header":"B"},"a":{"type":"integer","x-mcp-header":"A"}}}`,
			[]ParamHeader{{Name: "B", Header: "mcp-param-b", Path: []string{"b"}}, {Name: "A", Header: "mcp-param-a", Path: []string{"a"}}}, true},
		{"nested", `{"properties":{"loc":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`,
			[]ParamHeader{{Name: "Zone", Header: "mcp-param-zone", Path: []string{"loc", "zone"}}}, true},
		{"escaped key", `{"properties":{"r\u0065gion":{"type":"string","x-mcp-header":"Region"}}}`,
			[]ParamHeader{{Name: "Region", Header: "mcp-param-region", Path: []string{"region"}}}, true},
		{"empty name", `{"properties":{"v":{"type":"string","x-mcp-header":""}}}`, nil, false},
		{"object type", `{"properties":{"v":{"type":"object","x-mcp-header":"V"}}}`, nil, false},
		{"number type", `{"properties":{"v":{"type":"number","x-mcp-header":"V"}}}`, nil, false},
		{"no type", `{"properties":{"v":{"x-mcp-header":"V"}}}`, nil, false},
		{"space", `{"properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`, nil, false},
		{"colon", `{"properties":{"v":{"type":"string","x-mcp-header":"Region:Primary"}}}`, nil, false},
		{"non-ascii", `{"properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`, nil, false},
		{"not a string", `{"properties":{"v":{"type":"string","x-mcp-header":7}}}`, nil, false},
		{"duplicate", `{"properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`, nil, false},
	}
	for _, tc := range tests {
		got, ok := ScanParamHeaders([]byte(tc.schema))
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: ScanParamHeaders = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"properties":{`)
	for i := range MaxParamHeaders + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string","x-mcp-header":"H%d"}`, i, i)
	}
	b.WriteString(`}}`)
	if _, ok := ScanParamHeaders(b.Bytes()); ok {
		t.Errorf("a tool with %d declarations was accepted", MaxParamHeaders+1)
	}
}

func TestParamTable(t *testing.T) {
	tab := NewParamTable()
	tab.Learn([]byte(`{"tools":[{"name":"plain","inputSchema":{"type":"object"}}]}`))
	if len(*tab.tools.Load()) != 0 {
		t.Fatalf("learned a tool without declarations: %v", *tab.tools.Load())
	}
	tab.Learn([]byte(`{"tools":[{"name":"a","inputSchema":{"properties":{"r":{"type":"string","x-mcp-header":"R"}}}},` +
		`{"name":"bad","inputSchema":{"properties":{"r":{"type":"number","x-mcp-header":"R"}}}}]}`))
	if d := tab.Lookup([]byte("a")); len(d) != 1 || d[0].Name != "R" {
		t.Fatalf("Lookup(a) = %v", d)
	}
	if d := tab.Lookup([]byte("bad")); d != nil {
		t.Fatalf("Lookup(bad) = %v, want nil", d)
	}
	// A new listing without the declaration forgets it.
	tab.Learn([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`))
	if d := tab.Lookup([]byte("a")); d != nil {
		t.Fatalf("Lookup(a) after relisting = %v, want nil", d)
	}
	for i := range MaxParamTools + 10 {
		tab.Learn(fmt.Appendf(nil, `{"tools":[{"name":"t%d","inputSchema":{"properties":{"r":{"type":"string","x-mcp-header":"R"}}}}]}`, i))
	}
	if n := len(*tab.tools.Load()); n != MaxParamTools {
		t.Fatalf("table holds %d tools, want %d", n, MaxParamTools)
	}
	if d := tab.Lookup(fmt.Appendf(nil, "t%d", MaxParamTools+9)); d == nil {
		t.Fatal("the newest tool was not kept")
	}
}

// FuzzDecodeParamValue checks that decoding never panics, that a value
// AppendParamValue wrote decodes back to the string, and that what decodes
// matches the value it came from.
func FuzzDecodeParamValue(f *testing.F) {
	f.Add([]byte("=?base64?SGVsbG8=?="))
	f.Add([]byte("=?base64?SGVsbG8?="))
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, v []byte) {
		d, ok := DecodeParamValue(nil, v)
		if !ok {
			return
		}
		raw := appendJSONString(nil, d)
		enc, ok := AppendParamValue(nil, raw)
		if !ok {
			t.Fatalf("AppendParamValue(%s) refused a string", raw)
		}
		want, err := jsonrpc.Unquote(nil, raw)
		if err != nil {
			t.Fatalf("Unquote(%s): %v", raw, err)
		}
		back, ok := DecodeParamValue(nil, enc)
		if !ok || !bytes.Equal(back, want) {
			t.Fatalf("round trip of %q: %q -> %q, %v", want, enc, back, ok)
		}
		if m, _ := ParamMatches(back, raw); !m {
			t.Fatalf("ParamMatches(%q, %s) = false", back, raw)
		}
	})
}

// appendJSONString writes s as a JSON string with every byte outside
// printable ASCII escaped as the code point of the same number, so that
// any bytes make a valid string.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 || c > 0x7e:
			dst = fmt.Appendf(dst, `\u%04x`, c)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
