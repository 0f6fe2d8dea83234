//go:build !race

package mcpproxy_test

const raceEnabled = false
