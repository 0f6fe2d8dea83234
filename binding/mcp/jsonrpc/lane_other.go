//go:build !amd64

package jsonrpc

// runLane runs the lane (lane.go).
func (t *Tracker) runLane(p []byte, i, depth int, arr bool) (int, int, bool, laneExit) {
	return t.lane(p, i, depth, arr)
}
