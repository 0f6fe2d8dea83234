//go:build !race

package mcpclient_test

const raceEnabled = false
