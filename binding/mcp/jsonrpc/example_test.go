package jsonrpc_test

import (
	"fmt"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// A tools/call request arrives in pieces. The tracker finds its members as
// they close; the method and id are read from their ranges, and only the
// params, which the gateway must look into, are parsed, with fastjson.
func ExampleTracker() {
	msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools\/call",` +
		`"params":{"name":"get_weather","arguments":{"location":"Paris"}}}`)
	chunks := [][]byte{msg[:20], msg[20:80], msg[80:111], msg[111:]}

	var t jsonrpc.Tracker // one per connection or worker; Reset between messages
	for _, c := range chunks {
		if _, _, err := t.Feed(c); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("fed %d bytes: params done %v, message done %v\n", t.Offset(), t.ParamsDone(), t.Done())
	}
	if !t.Done() || t.Kind() != jsonrpc.KindObject {
		return
	}

	// The message is whole here; a gateway that forwards chunks as they
	// come keeps just the bytes of the ranges it needs.
	var scratch [64]byte
	method, _ := jsonrpc.Method(scratch[:0], t.Member(jsonrpc.MemberMethod).Bytes(msg))
	kind, id, _ := jsonrpc.ParseID(nil, t.Member(jsonrpc.MemberID).Bytes(msg))
	fmt.Printf("version ok: %v, method: %s, id: %s %s\n",
		jsonrpc.Version(t.Member(jsonrpc.MemberJSONRPC).Bytes(msg)), method, kind, id)

	var p fastjson.Parser // reused: parsing then allocates nothing
	params, err := p.ParseBytes(t.Member(jsonrpc.MemberParams).Bytes(msg))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("tool %s at %s\n", params.GetStringBytes("name"), params.GetStringBytes("arguments", "location"))
	// Output:
	// fed 20 bytes: params done false, message done false
	// fed 80 bytes: params done false, message done false
	// fed 111 bytes: params done true, message done false
	// fed 112 bytes: params done true, message done true
	// version ok: true, method: tools/call, id: number 7
	// tool get_weather at Paris
}

// A message that is not JSON is rejected at the first byte that breaks
// the grammar, with encoding/json's wording.
func ExampleSyntaxError() {
	var t jsonrpc.Tracker
	_, _, err := t.Feed([]byte(`{"jsonrpc":"2.0","id"}`))
	fmt.Println(err)
	// Output:
	// jsonrpc: offset 21: invalid character '}' after object key
}
