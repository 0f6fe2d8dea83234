package redisstore

import "github.com/sluicehq/sluice/engine/store"

// Subscribed returns a channel closed once s's subscription has first come
// up; a watcher registered after that sees every later change.
func Subscribed(s store.Store) <-chan struct{} { return s.(*Store).subscribed }
