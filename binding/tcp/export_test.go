package tcp

import (
	"github.com/sluicehq/sluice/engine"
)

// NewBindingRefusingSteering returns a binding whose steering programs
// fail to load with err, as on a kernel that refuses them.
func NewBindingRefusingSteering(err error) *Binding {
	return &Binding{load: func(int) (steerer, error) { return nil, err }}
}

// Steering reports whether the listeners of the binding named name on
// port run a steering program.
func Steering(b *Binding, e *engine.Engine, name string, port uint16) bool {
	id, ok := e.ResolveID(name)
	return ok && b.steering(groupKey{e: e, id: id, port: port})
}
