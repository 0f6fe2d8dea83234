package redisstore

import "errors"

var (
	// ErrValueTooLarge completes a Put whose value is longer than the
	// store's maxValueSize option.
	ErrValueTooLarge = errors.New("store/redis: value too large")

	// ErrBusy completes an operation refused because its queue to Redis is
	// full; the worker never waits for room.
	ErrBusy = errors.New("store/redis: queue full")

	// ErrUnavailable completes an operation while the store has lost its
	// connection to Redis. Operations fail fast with it until the
	// connection is back.
	ErrUnavailable = errors.New("store/redis: redis unavailable")
)
