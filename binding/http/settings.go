package http

import "github.com/sluicehq/sluice/engine"

// SettingServerHeader is the Server field the server kind adds to every
// response whose application sent none, and to the responses it writes
// itself, as Zilla's zilla.binding.http.server.header does. Unset, no
// Server field is added.
const SettingServerHeader = "http.server.header"

// Zilla's zilla.binding.http.* properties that its tests pin: accepted so
// that a Zilla test's settings carry over whole, but read by no kind yet,
// each for the reason given.
func init() {
	engine.RegisterSetting(engine.Setting{Name: SettingServerHeader,
		Usage: "Server field the http server adds to responses without one (default none)"})
	const h2 = "HTTP/2 is not supported yet"
	for name, why := range map[string]string{
		"http.concurrent.streams":             h2,
		"http.max.concurrent.streams.cleanup": h2,
		"http.streams.cleanup.delay":          h2,
		"http.stream.initial.window":          h2,
		"http.max.header.list.size":           h2,
		"http.maximum.connections":            "the client kind pools connections by options.max-idle",
		"http.user.agent.header":              "the client kind sends the application's headers as they are",
	} {
		engine.RegisterSetting(engine.Setting{Name: name, Unread: why})
	}
}
