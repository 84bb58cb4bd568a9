-- Concurrency leases: a sorted set of lease id -> expiry (microseconds) per key, pruned on every
-- call; the key expires with its last lease.
-- KEYS[1] the set. ARGV: pinned now, op (A acquire | R renew | X release | N count), lease id,
-- max, ttl. Returns 1/0 for acquire, renew and release, the count for N.
local function leases(KEYS, ARGV)
  local now = clock(ARGV[1])
  local op = ARGV[2]
  local key = KEYS[1]
  local id = ARGV[3]

  local function expire()
    local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    if last[2] then
      redis.call('PEXPIRE', key, ttl_ms(math.max(0, tonumber(last[2]) - now)))
    end
  end

  redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now))
  if op == 'A' then
    if redis.call('ZCARD', key) >= tonumber(ARGV[4]) then return 0 end
    redis.call('ZADD', key, fmt(now + tonumber(ARGV[5])), id)
    expire()
    return 1
  elseif op == 'R' then
    if not redis.call('ZSCORE', key, id) then return 0 end
    redis.call('ZADD', key, 'XX', fmt(now + tonumber(ARGV[5])), id)
    expire()
    return 1
  elseif op == 'X' then
    local removed = redis.call('ZREM', key, id)
    expire()
    return removed
  end
  return redis.call('ZCARD', key)
end
