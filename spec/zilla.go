package spec

import (
	"slices"
	"strings"
)

// The names below are the zilla type system of k3po, as Zilla's own test
// transport registers it (ZillaTypeSystem in runtime/engine's tests). k3po
// rejects a script that names anything else in the zilla namespace, and so
// does Parse, at the name's position. Other namespaces (http:, tls:, …)
// belong to other k3po transports; Parse keeps their statements as
// *ReadConfig, *WriteConfig and options without checking the names.

var zillaStreamOptions = []string{
	"affinity", "alignment", "authorization", "budgetId", "byteorder",
	"capabilities", "padding", "redirectedId", "replyTo", "sharedWindow",
	"throttle", "timestamps", "transmission", "update", "window",
}

var (
	// zillaAcceptOptions may follow accept.
	zillaAcceptOptions = zillaStreamOptions
	// zillaConnectOptions may follow connect.
	zillaConnectOptions = sortedUnion(zillaStreamOptions, "ephemeral", "streamId")
	// zillaReadOptions may follow `read option`.
	zillaReadOptions = []string{"ack", "flags"}
	// zillaWriteOptions may follow `write option`.
	zillaWriteOptions = []string{"flags"}
	// defaultReadWriteOptions are k3po's own, unqualified, options.
	defaultReadWriteOptions = []string{"mask"}

	// zillaReadConfigs may follow `read`; zillaWriteConfigs `write`.
	zillaReadConfigs  = []string{"abort.ext", "begin.ext", "data.empty", "data.ext", "data.null", "end.ext", "reset.ext"}
	zillaWriteConfigs = []string{"abort.ext", "begin.ext", "data.empty", "data.ext", "end.ext", "reset.ext"}

	// zillaReadAdvisories act against the read direction: `read advise`
	// sends them and `write advised` expects them. zillaWriteAdvisories
	// act on the write direction: `write advise` sends, `read advised`
	// expects.
	zillaReadAdvisories  = []string{"challenge", "redirect"}
	zillaWriteAdvisories = []string{"flush"}
)

func sortedUnion(a []string, more ...string) []string {
	out := slices.Concat(a, more)
	slices.Sort(out)
	return out
}

// splitQName splits "ns:name" into its namespace and name.
func splitQName(q string) (ns, name string) {
	ns, name, _ = strings.Cut(q, ":")
	return ns, name
}

// oneOf formats names as "a, b or c", each with prefix.
func oneOf(prefix string, names []string) string {
	var b strings.Builder
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(prefix + n)
	}
	return b.String()
}
