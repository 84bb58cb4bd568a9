-- The leaky bucket of nginx's limit_req (kind N), line for line with dev.sluice.core.LeakyBucket:
-- an excess in thousandths of a request drained on a millisecond clock with nginx's truncating
-- divisions. Kept apart from limits.lua, which calls these for kind 'N'.
-- Parameters: p1 rate (thousandths of a request per second), p2 burst (thousandths).
-- State: {excess, last accepted millisecond, both as they were before the last commit} (the
-- last two let a refund restore the state exactly); an excess of -1000 is a key never seen.
local LEAKY_UNIT = 1000
local LEAKY_IDLE_MS = 60000

local function leaky_ceil(a, b)
  return -idiv(-a, b)
end

local function leaky_init(l, now)
  local t = idiv(now, 1000)
  l.s = {-LEAKY_UNIT, t, -LEAKY_UNIT, t}
end

-- The level at millisecond t before any request: -1000 when the state is fresh.
local function leaky_level(l, t)
  local rate, s = l.p1, l.s
  local elapsed = math.max(0, t - s[2])
  local drain_ms = leaky_ceil((l.p2 + LEAKY_UNIT) * 1000, rate)
  local left = s[1] - idiv(rate * math.min(elapsed, drain_ms), 1000)
  if left <= -LEAKY_UNIT or (elapsed >= LEAKY_IDLE_MS and left <= 0) then
    return -LEAKY_UNIT
  end
  return left
end

local function leaky_after(level, cost)
  if level == -LEAKY_UNIT then return (cost - 1) * LEAKY_UNIT end
  return math.max(0, level + cost * LEAKY_UNIT)
end

local function leaky_fresh_after(l, e)
  local drained_out = leaky_ceil((e + LEAKY_UNIT) * 1000, l.p1)
  local idle = LEAKY_IDLE_MS
  if e > 0 then idle = math.max(idle, leaky_ceil(e * 1000, l.p1)) end
  return math.max(0, math.min(drained_out, idle))
end

-- Returns ok, remaining, reset, retryAfter (microseconds), as test() in limits.lua.
local function leaky_test(l, now, cost)
  local burst, s = l.p2, l.s
  local t = idiv(now, 1000)
  local level = leaky_level(l, t)
  local e = leaky_after(level, cost)
  if e <= burst then
    local last = math.max(t, s[2])
    if level == -LEAKY_UNIT then last = t end
    return true, idiv(burst - e, LEAKY_UNIT),
      math.max(0, (last + leaky_fresh_after(l, e)) * 1000 - now), 0
  end
  local last = s[2]
  local reset = 0
  if level ~= -LEAKY_UNIT then
    reset = math.max(0, (last + leaky_fresh_after(l, s[1])) * 1000 - now)
  end
  local fits = leaky_ceil((s[1] + cost * LEAKY_UNIT - burst) * 1000, l.p1)
  if (cost - 1) * LEAKY_UNIT <= burst then
    fits = math.min(fits, leaky_fresh_after(l, s[1]))
  end
  return false, math.max(0, idiv(burst - level, LEAKY_UNIT)), reset,
    math.max(1, (last + fits) * 1000 - now)
end

local function leaky_commit(l, now, cost)
  local t = idiv(now, 1000)
  local s = l.s
  local level = leaky_level(l, t)
  s[3], s[4] = s[1], s[2]
  s[1] = leaky_after(level, cost)
  if level == -LEAKY_UNIT then s[2] = t else s[2] = math.max(t, s[2]) end
end

local function leaky_until_fresh(l, now)
  local s = l.s
  if leaky_level(l, idiv(now, 1000)) == -LEAKY_UNIT then return 0 end
  return math.max(0, (s[2] + leaky_fresh_after(l, s[1])) * 1000 - now)
end

-- Gives back what a commit of cost at microsecond 'at' took. When the state is still the one
-- that commit wrote, the one before it comes back exactly (a drain recomputed from the commit
-- would truncate differently); otherwise cost requests come off the excess, leaving the key
-- never emptier than one that was not touched.
local function leaky_refund(l, at, cost)
  local s = l.s
  local t = idiv(at, 1000)
  local before = {p1 = l.p1, p2 = l.p2, s = {s[3], s[4]}}
  local level = leaky_level(before, t)
  local last = math.max(t, s[4])
  if level == -LEAKY_UNIT then last = t end
  if s[1] == leaky_after(level, cost) and s[2] == last then
    s[1], s[2] = s[3], s[4]
  else
    s[1] = math.max(-LEAKY_UNIT, s[1] - cost * LEAKY_UNIT)
  end
end
