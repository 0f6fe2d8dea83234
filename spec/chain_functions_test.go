package spec_test

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/idl/dynamic"
	"github.com/sluicehq/sluice/spec"
)

// evalDecoded evaluates a builder expression and decodes its bytes as typ.
func evalDecoded(t *testing.T, typ, src string) map[string]any {
	t.Helper()
	v, err := (&spec.Env{}).EvalString(src)
	require.NoError(t, err)
	b, ok := v.([]byte)
	require.True(t, ok, "%T", v)
	s, err := dynamic.Builtin()
	require.NoError(t, err)
	m, err := s.Decode(typ, b)
	require.NoError(t, err)
	return m
}

func TestProxyAddressHelpers(t *testing.T) {
	m := evalDecoded(t, "proxy::stream::ProxyBeginEx", `proxy:beginEx()
		.typeId(zilla:id("proxy"))
		.addressInet()
			.protocol("stream")
			.source("0.0.0.0")
			.destination("localhost")
			.sourcePort(0)
			.destinationPort(8080)
			.build()
		.info()
			.authority("localhost")
			.build()
		.build()`)
	addr := m["address"].(map[string]any)
	assert.Equal(t, "inet", addr["kind"])
	assert.Equal(t, map[string]any{"protocol": "STREAM", "source": "0.0.0.0", "destination": "localhost",
		"sourcePort": int64(0), "destinationPort": int64(8080)}, addr["inet"])
	require.Len(t, m["infos"], 1)
	assert.Equal(t, "localhost", m["infos"].([]any)[0].(map[string]any)["authority"])

	m = evalDecoded(t, "proxy::stream::ProxyBeginEx", `proxy:beginEx().typeId(1)
		.addressInet4().protocol("datagram").source("127.0.0.1").destination("10.0.0.2").sourcePort(1).destinationPort(2).build()
		.build()`)
	inet4 := m["address"].(map[string]any)["inet4"].(map[string]any)
	assert.Equal(t, "DATAGRAM", inet4["protocol"])
	assert.Equal(t, []byte{127, 0, 0, 1}, inet4["source"])
	assert.Equal(t, []byte{10, 0, 0, 2}, inet4["destination"])

	m = evalDecoded(t, "proxy::stream::ProxyBeginEx", `proxy:beginEx().typeId(1)
		.addressInet6().protocol("stream").source("::1").destination("fd00::2").sourcePort(1).destinationPort(2).build()
		.build()`)
	inet6 := m["address"].(map[string]any)["inet6"].(map[string]any)
	assert.Equal(t, append(make([]byte, 15), 1), inet6["source"])

	m = evalDecoded(t, "proxy::stream::ProxyBeginEx", `proxy:beginEx().typeId(1)
		.addressUnix().protocol("stream").source("/tmp/a.sock").destination("/tmp/b.sock").build()
		.build()`)
	unix := m["address"].(map[string]any)["unix"].(map[string]any)
	want := make([]byte, 108)
	copy(want, "/tmp/a.sock")
	assert.Equal(t, want, unix["source"])

	m = evalDecoded(t, "proxy::stream::ProxyBeginEx", `proxy:beginEx().typeId(1).addressNone().build().build()`)
	assert.Equal(t, "none", m["address"].(map[string]any)["kind"])
}

func TestProxyInfoRun(t *testing.T) {
	src := `proxy:beginEx().typeId(1)
		.addressNone().build()
		.info()
			.alpn("h2")
			.secure()
				.version("TLSv1.3")
				.cipher("TLS_AES_128_GCM_SHA256")
				.build()
			.namespace("ns")
			.build()
		.build()`
	m := evalDecoded(t, "proxy::stream::ProxyBeginEx", src)
	infos := m["infos"].([]any)
	require.Len(t, infos, 4, "every method of the run appends one info")
	assert.Equal(t, "h2", infos[0].(map[string]any)["alpn"])
	assert.Equal(t, "TLSv1.3", infos[1].(map[string]any)["secure"].(map[string]any)["version"])
	assert.Equal(t, "TLS_AES_128_GCM_SHA256", infos[2].(map[string]any)["secure"].(map[string]any)["cipher"])
	assert.Equal(t, "ns", infos[3].(map[string]any)["namespace"])

	e := &spec.Env{}
	built, err := e.EvalString(src)
	require.NoError(t, err)
	match := func(src string) error {
		t.Helper()
		v, err := e.EvalString(src)
		require.NoError(t, err)
		return v.(*dynamic.Matcher).Match(built.([]byte))
	}
	assert.NoError(t, match(`proxy:matchBeginEx().typeId(1).info().alpn("h2").secure().version("TLSv1.3").build().build().build()`))
	assert.NoError(t, match(`proxy:matchBeginEx().typeId(1).addressNone().build().build()`))
	assert.ErrorContains(t, match(`proxy:matchBeginEx().typeId(1).info().alpn("http/1.1").build().build()`),
		`ProxyBeginEx.infos: expected an item {kind: alpn, alpn: "http/1.1"}`)
	assert.ErrorContains(t, match(`proxy:matchBeginEx().typeId(1).addressInet().build().build()`),
		`ProxyBeginEx.address.kind: expected inet, got none`)
}

func TestProxyHelperErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"wrong family", `proxy:beginEx().addressInet4().source("::1")`, `.source("::1") on ProxyBeginEx.address.inet4: ::1 is not an IPv4 address`},
		{"long socket path", `proxy:beginEx().addressUnix().source("` + longPath + `")`, `1:38: .source: a socket path of 116 bytes is longer than 108`},
		{"unknown protocol", `proxy:beginEx().addressInet().protocol("raw")`, `"RAW" is not a constant of enum ProxyAddressProtocol`},
		{"arguments to open", `proxy:beginEx().addressNone(1)`, `.addressNone takes no arguments, got 1`},
		{"unknown info", `proxy:beginEx().info().nope("x")`, `unknown method .nope on ProxyBeginEx.infos[0] builder`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := (&spec.Env{}).EvalString(tt.src)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

const longPath = "/tmp/0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678.s"

func TestMcpLifecycleCapabilities(t *testing.T) {
	m := evalDecoded(t, "mcp::stream::McpBeginEx", `mcp:beginEx().typeId(1)
		.lifecycle()
			.sessionId("s")
			.capabilities("CLIENT_ELICITATION", "CLIENT_ELICITATION_FORM", "CLIENT_ELICITATION_URL")
			.build()
		.build()`)
	assert.Equal(t, int64(256|512|1024), m["lifecycle"].(map[string]any)["capabilities"])
	m = evalDecoded(t, "mcp::stream::McpBeginEx", `mcp:beginEx().typeId(1).lifecycle().sessionId("s").capabilities(5).build().build()`)
	assert.Equal(t, int64(5), m["lifecycle"].(map[string]any)["capabilities"], "an integer sets the bits as is")

	e := &spec.Env{}
	built, err := e.EvalString(`mcp:beginEx().typeId(1).lifecycle().capabilities("SERVER_RESOURCES_SUBSCRIBE").build().build()`)
	require.NoError(t, err)
	mt, err := e.EvalString(`mcp:matchBeginEx().typeId(1).lifecycle().capabilities("SERVER_RESOURCES_SUBSCRIBE").build().build()`)
	require.NoError(t, err)
	assert.NoError(t, mt.(*dynamic.Matcher).Match(built.([]byte)))

	_, err = e.EvalString(`mcp:beginEx().lifecycle().capabilities("CLIENT_ROOTS", "SERVER_NOPE")`)
	assert.ErrorContains(t, err, `1:56: .capabilities: "SERVER_NOPE" is not a constant of McpCapabilities (SERVER_TOOLS, `)
}

func TestHeaderMissing(t *testing.T) {
	e := &spec.Env{}
	built, err := e.EvalString(`http:beginEx().typeId(1).header(":status", "200").header("content-type", "text/event-stream").build()`)
	require.NoError(t, err)
	match := func(src string) error {
		t.Helper()
		v, err := e.EvalString(src)
		require.NoError(t, err)
		return v.(*dynamic.Matcher).Match(built.([]byte))
	}
	assert.NoError(t, match(`http:matchBeginEx().typeId(1).header(":status", "200").headerMissing("alt-svc").build()`))
	assert.ErrorContains(t, match(`http:matchBeginEx().typeId(1).headerMissing("content-type").build()`),
		`HttpBeginEx.headers[1]: expected no item {name: "content-type"}, got {name: "content-type", value: "text/event-stream"}`)
	assert.NoError(t, match(`http:matchBeginEx().typeId(1).headerMissing("content-type", "text/plain").build()`),
		"an absent item given with its value only excludes that value")
	_, err = e.EvalString(`http:beginEx().headerMissing("x")`)
	assert.ErrorContains(t, err, `unknown method .headerMissing on HttpBeginEx builder`, "only matchers take Missing")
	_, err = e.EvalString(`http:matchBeginEx().headerMissing()`)
	assert.ErrorContains(t, err, `headerMissing takes the item that must be absent`)
}

func TestScopeAndCoreFunctions(t *testing.T) {
	e := &spec.Env{}
	eval := func(src string) any {
		t.Helper()
		v, err := e.EvalString(src)
		require.NoError(t, err, src)
		return v
	}
	assert.Equal(t, "http%3A%2F%2Flocalhost%3A8080%2Fmcp%2Fauth%2Fcallback", eval(`http:encodeQuery("http://localhost:8080/mcp/auth/callback")`))
	assert.Equal(t, "a%20b*._-%7E%C3%A9", eval(`http:encodeQuery("a b*._-~`+"\u00e9"+`")`))
	assert.Equal(t, "https://as.example/authorize?redirect_uri=https%3A%2F%2Freplace.me%2Fcallback",
		eval(`"https://as.example/authorize?redirect_uri=%s".formatted(http:encodeQuery("https://replace.me/callback"))`))
	assert.Equal(t, int64(1), eval(`core:capabilities("CHALLENGE")`))

	a := eval(`core:randomBase64(10000)`).(string)
	assert.Equal(t, a, eval(`core:randomBase64(10000)`), "seeded by the length, as Zilla's")
	raw, err := base64.StdEncoding.DecodeString(a)
	require.NoError(t, err)
	assert.Len(t, raw, 10000)
	assert.NotEqual(t, a[:100], eval(`core:randomBase64(10001)`).(string)[:100])

	_, err = e.EvalString(`core:capabilities("CHALLENGE", "FLY")`)
	assert.ErrorContains(t, err, `1:32: core:capabilities: unknown capability "FLY" (CHALLENGE)`)
	_, err = e.EvalString(`core:capabilities()`)
	assert.ErrorContains(t, err, `core:capabilities takes at least one capability, got none`)
	_, err = e.EvalString(`http:encodeQuery(1)`)
	assert.ErrorContains(t, err, `http:encodeQuery: want a string, got integer 1`)
	names, err := e.Functions("http")
	require.NoError(t, err)
	assert.Contains(t, names, "http:encodeQuery")
}
