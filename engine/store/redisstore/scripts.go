package redisstore

import goredis "github.com/redis/go-redis/v9"

// The writes that watchers must see run as scripts, so that a write and
// the PUBLISH of its change notification happen at once: Redis runs a
// script without interleaving, so notifications go out in the order the
// writes were made. KEYS[1] is the Redis key; ARGV carries the value, the
// ttl in milliseconds (0 for none) and the change channel.
var (
	// putScript sets the value and announces it.
	putScript = goredis.NewScript(`
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
redis.call('PUBLISH', ARGV[3], '1' .. ARGV[1])
return 1
`)

	// putIfAbsentScript sets and announces the value unless one is
	// present, and returns {1} when it stored or {0, present value}.
	putIfAbsentScript = goredis.NewScript(`
local present = redis.call('GET', KEYS[1])
if present then
  return {0, present}
end
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
redis.call('PUBLISH', ARGV[3], '1' .. ARGV[1])
return {1}
`)

	// deleteScript removes the value and announces it if there was one.
	deleteScript = goredis.NewScript(`
if redis.call('DEL', KEYS[1]) == 1 then
  redis.call('PUBLISH', ARGV[1], '0')
end
return 1
`)

	// getAndDeleteScript removes and returns the value, announcing the
	// removal, or returns nil when there was none.
	getAndDeleteScript = goredis.NewScript(`
local present = redis.call('GETDEL', KEYS[1])
if present then
  redis.call('PUBLISH', ARGV[1], '0')
end
return present
`)

	// unlockScript deletes the lock if ARGV[1] is its token.
	unlockScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

	// renewScript restarts the lock's lease at ARGV[2] milliseconds, or
	// removes its expiry for 0, if ARGV[1] is its token.
	renewScript = goredis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '0' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
`)
)
