-- Rule state, shared by evaluate.lua and refund.lua. Each function mirrors the Java algorithm of
-- the same name in dev.sluice.core (TokenBucket, FixedWindow, SlidingWindow, SlidingLog,
-- DecayingScore) line for line, in microseconds.
--
-- One rule key is a string 'signature,banUntil,field,field,...' whose fields are each limit's
-- state in order: T tat | F index,count | W index,prev,cur | L seq |
-- S score,last,score before the last commit,last before it (so a refund can undo it exactly) |
-- N the same four for nginx's leaky bucket (leaky.lua).
-- A sliding log keeps its hits in a sorted set of its own (score = hit time), in the same hash
-- slot as the rule key. A signature that differs (the rule was reloaded with other limits)
-- reads as a fresh key, like MemoryStore's layout check.
--
-- KEYS: per rule, its state key, then one sorted-set key per sliding-log limit.
-- ARGV from 'first': per rule: enforce (1|0), ban us, signature, limit count, then per limit:
-- kind (T|F|W|L|S|N) and three numbers:
--   T burst, interval | F limit, window | W limit, window | L limit, window |
--   S max, perAction (millionths of a point), decay | N (leaky.lua) rate, burst.

local FIELDS = {T = 1, F = 2, W = 3, L = 1, S = 4, N = 4}

local function parse_rules(KEYS, ARGV, first, count)
  local rules = {}
  local a, k = first, 1
  for i = 1, count do
    local r = {enforce = ARGV[a] == '1', ban = tonumber(ARGV[a + 1]), sig = ARGV[a + 2],
      key = KEYS[k], limits = {}}
    local m = tonumber(ARGV[a + 3])
    a = a + 4
    k = k + 1
    for j = 1, m do
      local l = {kind = ARGV[a], p1 = tonumber(ARGV[a + 1]), p2 = tonumber(ARGV[a + 2]),
        p3 = tonumber(ARGV[a + 3])}
      a = a + 4
      if l.kind == 'L' then
        l.log = KEYS[k]
        k = k + 1
      end
      r.limits[j] = l
    end
    rules[i] = r
  end
  return rules
end

local function init(l, now)
  local kind = l.kind
  if kind == 'N' then return leaky_init(l, now) end
  if kind == 'T' then
    l.s = {now}
  elseif kind == 'F' then
    l.s = {idiv(now, l.p2) - 1, 0}
  elseif kind == 'W' then
    l.s = {idiv(now, l.p2) - 2, 0, 0}
  elseif kind == 'L' then
    l.s = {0}
    l.stale = true
  else
    l.s = {0, now, 0, now}
  end
end

-- Reads a rule's state; a missing key or another signature is a fresh state.
local function load(r, now)
  local raw = redis.call('GET', r.key)
  local v = {}
  if raw then
    for x in string.gmatch(raw, '[^,]+') do v[#v + 1] = x end
  end
  if v[1] ~= r.sig then
    r.banUntil = 0
    for _, l in ipairs(r.limits) do init(l, now) end
    return
  end
  r.banUntil = tonumber(v[2])
  local f = 3
  for _, l in ipairs(r.limits) do
    local s = {}
    for x = 1, FIELDS[l.kind] do
      s[x] = tonumber(v[f])
      f = f + 1
    end
    l.s = s
  end
end

local function log_at(l, rank)
  local e = redis.call('ZRANGE', l.log, rank, rank, 'WITHSCORES')
  return tonumber(e[2])
end

-- Sliding window: {prev, cur} rolled forward to bucket 'index'.
local function rolled(s, index)
  if s[1] >= index then return s[2], s[3] end
  if s[1] == index - 1 then return s[3], 0 end
  return 0, 0
end

local function window_first_allowed(w, slack, prev)
  return w - muldiv_ceil(slack + 1, w, prev) + 1
end

local function window_retry(l, elapsed, prev, cur, cost)
  local limit, w = l.p1, l.p2
  local slack = limit - cost - cur
  if slack >= 0 and prev > 0 then
    local at = window_first_allowed(w, slack, prev)
    if at < w then return at - elapsed end
  end
  local to_end = w - elapsed
  if cur == 0 then return to_end end
  local nxt = window_first_allowed(w, limit - cost, cur)
  if nxt <= 0 then return to_end end
  if nxt < w then return to_end + nxt end
  return to_end + w
end

local function score_decayed(l, now)
  local score, last = l.s[1], l.s[2]
  if score == 0 then return 0 end
  local elapsed = now - last
  if elapsed <= 0 then return score end
  if elapsed >= muldiv_ceil(score, l.p3, 1000000) then return 0 end
  return score - muldiv_floor(elapsed, 1000000, l.p3)
end

-- Returns ok, remaining, reset, retryAfter, score (millionths, or -1 when not a score).
local function test(l, now, cost)
  local kind, s = l.kind, l.s
  if kind == 'N' then
    local ok, rem, rst, ra = leaky_test(l, now, cost)
    return ok, rem, rst, ra, -1
  end
  if kind == 'T' then
    local burst, interval = l.p1, l.p2
    local cap = burst * interval
    local base = math.max(s[1], now)
    local ahead = base + cost * interval - now
    if ahead <= cap then
      return true, idiv(cap - ahead, interval), ahead, 0, -1
    end
    local backlog = base - now
    return false, math.max(0, idiv(cap - backlog, interval)), backlog, ahead - cap, -1
  elseif kind == 'F' then
    local limit, w = l.p1, l.p2
    local index = math.max(idiv(now, w), s[1])
    local count = 0
    if s[1] >= index then count = s[2] end
    local to_end = (index + 1) * w - now
    if count + cost <= limit then
      return true, limit - count - cost, to_end, 0, -1
    end
    return false, limit - count, to_end, to_end, -1
  elseif kind == 'W' then
    local limit, w = l.p1, l.p2
    local index = math.max(idiv(now, w), s[1])
    local elapsed = math.min(math.max(now - index * w, 0), w - 1)
    local prev, cur = rolled(s, index)
    local weighted = muldiv_floor(w - elapsed, prev, w)
    local to_end = w - elapsed
    if cur + cost + weighted <= limit then
      return true, limit - cur - cost - weighted, to_end + w, 0, -1
    end
    local reset = to_end
    if cur > 0 then reset = to_end + w end
    return false, math.max(0, limit - cur - weighted), reset,
      window_retry(l, elapsed, prev, cur, cost), -1
  elseif kind == 'L' then
    local limit, w = l.p1, l.p2
    if l.stale then
      if cost <= limit then return true, limit - cost, w, 0, -1 end
      return false, limit, 0, 0, -1
    end
    local count = redis.call('ZCARD', l.log)
    local live = redis.call('ZCOUNT', l.log, '(' .. fmt(now - w), '+inf')
    local expired = count - live
    if live + cost <= limit then
      return true, limit - live - cost, w, 0, -1
    end
    local must_leave = live + cost - limit
    return false, limit - live, log_at(l, count - 1) + w - now,
      log_at(l, expired + must_leave - 1) + w - now, -1
  else
    local max, add, decay = l.p1, l.p2, l.p3
    local current = score_decayed(l, now)
    local nxt = current + add * cost
    if nxt <= max then
      return true, idiv(max - nxt, add), muldiv_ceil(nxt, decay, 1000000), 0, nxt
    end
    -- Decay counts from the last touch, so the waits do too (part of the needed point may
    -- already have decayed without showing in the floored score).
    local last = s[2]
    return false, idiv(max - current, add), last + muldiv_ceil(s[1], decay, 1000000) - now,
      last + muldiv_ceil(s[1] - (max - add * cost), decay, 1000000) - now, current
  end
end

local function commit(l, now, cost)
  local kind, s = l.kind, l.s
  if kind == 'N' then return leaky_commit(l, now, cost) end
  if kind == 'T' then
    s[1] = math.max(s[1], now) + cost * l.p2
  elseif kind == 'F' then
    local index = math.max(idiv(now, l.p2), s[1])
    local count = 0
    if s[1] >= index then count = s[2] end
    s[1] = index
    s[2] = count + cost
  elseif kind == 'W' then
    local index = math.max(idiv(now, l.p2), s[1])
    local prev, cur = rolled(s, index)
    s[1] = index
    s[2] = prev
    s[3] = cur + cost
  elseif kind == 'L' then
    local stamp = now
    if l.stale then
      redis.call('DEL', l.log)
      l.stale = false
    else
      redis.call('ZREMRANGEBYSCORE', l.log, '-inf', fmt(now - l.p2))
      local newest = redis.call('ZRANGE', l.log, -1, -1, 'WITHSCORES')
      if newest[2] then stamp = math.max(now, tonumber(newest[2])) end
    end
    local score = fmt(stamp)
    local done = 0
    while done < cost do
      local args = {}
      local batch = math.min(cost - done, 500)
      for x = 1, batch do
        args[#args + 1] = score
        args[#args + 1] = score .. ':' .. fmt(s[1] + done + x)
      end
      redis.call('ZADD', l.log, unpack(args))
      done = done + batch
    end
    s[1] = s[1] + cost
  else
    local current = score_decayed(l, now)
    s[3] = s[1]
    s[4] = s[2]
    s[1] = current + l.p2 * cost
    s[2] = math.max(now, s[2])
  end
end

-- One rule's verdict for 'cost' on its loaded state, committing nothing:
-- {type, limit index, remaining, reset, retryAfter, score}, type 0 allowed, 1 refused, 3 banned.
local function test_rule(r, now, cost)
  local ban_left = r.banUntil - now
  if r.ban > 0 and ban_left > 0 then
    return {3, -1, 0, ban_left, ban_left, -1}
  end
  local refused, binding = -1, -1
  local remaining, reset, retry, score = 0, 0, 0, -1
  for j, l in ipairs(r.limits) do
    local ok, rem, rst, ra, sc = test(l, now, cost)
    if not ok and (refused < 0 or ra > retry) then
      refused = j - 1
      remaining, reset, retry, score = rem, rst, ra, sc
    elseif ok and refused < 0 and (binding < 0 or rem < remaining) then
      binding = j - 1
      remaining, reset, score = rem, rst, sc
    end
  end
  if refused >= 0 then
    return {1, refused, remaining, reset, retry, score}
  end
  return {0, binding, remaining, reset, 0, score}
end

-- Starts the rule's ban on 'v', its refusal by a limit (type 1 becomes 2).
local function start_ban(r, v, now)
  r.banUntil = now + r.ban
  v[1] = 2
  v[4] = math.max(v[4], r.ban)
  v[5] = r.ban
end

-- Microseconds until the limit's state decides like a never-seen key (0 when it already does).
local function until_fresh(l, now)
  local kind, s = l.kind, l.s
  if kind == 'N' then return leaky_until_fresh(l, now) end
  if kind == 'T' then
    return math.max(0, s[1] - now)
  elseif kind == 'F' then
    if s[2] == 0 or s[1] < idiv(now, l.p2) then return 0 end
    return (s[1] + 1) * l.p2 - now
  elseif kind == 'W' then
    local w = l.p2
    local index = math.max(idiv(now, w), s[1])
    local prev, cur = rolled(s, index)
    if cur > 0 then return (index + 2) * w - now end
    if prev > 0 then return (index + 1) * w - now end
    return 0
  elseif kind == 'L' then
    if l.stale then return 0 end
    local newest = redis.call('ZRANGE', l.log, -1, -1, 'WITHSCORES')
    if not newest[2] then return 0 end
    return math.max(0, tonumber(newest[2]) + l.p2 - now)
  else
    if score_decayed(l, now) == 0 then return 0 end
    return math.max(0, s[2] + muldiv_ceil(s[1], l.p3, 1000000) - now)
  end
end

-- Writes a rule's state back with a TTL equal to the time it takes to become fresh (plus a
-- margin), or deletes it (and its logs) when it already is fresh: no key lives without a TTL.
local function save(r, now)
  local ttl = math.max(0, r.banUntil - now)
  local out = {r.sig, fmt(r.banUntil)}
  for _, l in ipairs(r.limits) do
    local left = until_fresh(l, now)
    if left > ttl then ttl = left end
    if l.kind == 'L' then
      if left > 0 then
        redis.call('PEXPIRE', l.log, ttl_ms(left))
      elseif not l.stale then
        redis.call('DEL', l.log)
      end
    end
    for x = 1, FIELDS[l.kind] do out[#out + 1] = fmt(l.s[x]) end
  end
  if ttl > 0 then
    redis.call('SET', r.key, table.concat(out, ','), 'PX', ttl_ms(ttl))
  else
    redis.call('DEL', r.key)
  end
end
