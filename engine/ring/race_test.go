//go:build race

package ring_test

const raceEnabled = true
