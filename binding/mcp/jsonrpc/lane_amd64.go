package jsonrpc

// laneAMD64 is lane in assembly (lane_amd64.s), given what it reads of
// the Tracker as arguments: the nesting stack, the depth limit, and the
// window's base, size and masks.
//
//go:noescape
func laneAMD64(p []byte, i, depth int, arr bool, stack *uint64, maxDepth, base, n int, masks *byte) (ri, rdepth int, rarr bool, ex laneExit)

// laneAsm selects laneAMD64 for scan; tests turn it off to hold the two
// to the same results.
var laneAsm = true

// runLane runs the lane, in assembly unless laneAsm is off.
func (t *Tracker) runLane(p []byte, i, depth int, arr bool) (int, int, bool, laneExit) {
	if laneAsm {
		return laneAMD64(p, i, depth, arr, &t.stack[0], t.maxDepth, t.win.base, t.win.n, &t.win.b[0])
	}
	return t.lane(p, i, depth, arr)
}
