package mcp

// MaxNotification bounds the params of a notification sent in parts (the
// mcp client's bound) and put back together (the server's): larger ones
// are dropped with a warning. A part is at most a frame (32 KiB by
// default), so this is 32 or more FLUSHes sent at once into a worker's
// ring (32 MiB by default).
const MaxNotification = 1 << 20
