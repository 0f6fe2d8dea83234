package tcp

import (
	_ "embed"
	"encoding/json"
)

// kindSchemas are what each kind requires of the options beyond Zilla's
// tcp schema, which leaves the port out: a server cannot listen without
// one. As a schema the rule fails sluice validate as it fails start, with
// the file and line.
var kindSchemas = map[string]json.RawMessage{
	"server": serverKindSchema,
}

//go:embed kind-server.schema.json
var serverKindSchema json.RawMessage
