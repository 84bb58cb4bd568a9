-- The reservations of one key of a rule counted on responses (Reservation.java): a sorted set
-- of 'id:cost' -> expiry (microseconds) in the key's hash slot, pruned on every call; the set
-- expires with its last reservation, so a crashed gateway's shares lapse on their own.

-- What a refusal because of requests in flight tells the client to wait, in microseconds.
local IN_FLIGHT_US = 1000000

-- The total cost of the unexpired reservations.
local function held_total(set, now)
  redis.call('ZREMRANGEBYSCORE', set, '-inf', fmt(now))
  local total = 0
  for _, m in ipairs(redis.call('ZRANGE', set, 0, -1)) do
    total = total + tonumber(string.match(m, ':(%d+)$'))
  end
  return total
end

local function held_expire(set, now)
  local last = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIRE', set, ttl_ms(math.max(0, tonumber(last[2]) - now)))
  end
end

local function held_add(set, now, id, cost, ttl)
  redis.call('ZADD', set, fmt(now + ttl), id .. ':' .. fmt(cost))
  held_expire(set, now)
end

local function held_drop(set, now, id, cost)
  redis.call('ZREM', set, id .. ':' .. fmt(cost))
  redis.call('ZREMRANGEBYSCORE', set, '-inf', fmt(now))
  held_expire(set, now)
end
