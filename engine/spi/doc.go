// Package spi holds what the engine's plug-in points share: the
// [Dispatcher] through which asynchronous work completes on a worker, the
// injectable [Clock], the [Registry] of named types that binding, store,
// guard and exporter packages fill from init, and [CheckKeys] for
// rejecting unknown options.
//
//	var stores = spi.NewRegistry[Info]("store", ErrUnknownType)
//
//	func Register(info Info) { stores.Register(info.Type, info) }
package spi
