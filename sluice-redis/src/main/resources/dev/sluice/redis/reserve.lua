-- Reserving and settling a rule of limits counted on responses (MemoryStore.reserve and
-- settle in Lua), one rule per call. KEYS: the rule's keys as in limits.lua, then its set of
-- reservations (held.lua).
--
-- reserve ARGV: pinned now, cost, reservation id, ttl (microseconds), then the rule as in
-- limits.lua. The settled state must allow 'cost' (a refusal starts an enforcing rule's ban), and
-- 'cost' plus every reservation held must pass too, else the refusal is in flight.
-- Returns {now, type, limit index, remaining, reset, retryAfter, score}: type 0 held, 1 refused,
-- 2 refused and ban started, 3 banned, 4 refused in flight.
local function reserve(KEYS, ARGV)
  local now = clock(ARGV[1])
  local cost = tonumber(ARGV[2])
  local r = parse_rules(KEYS, ARGV, 5, 1)[1]
  local set = KEYS[#KEYS]
  load(r, now)
  local v = test_rule(r, now, cost)
  if v[1] ~= 0 then
    if v[1] == 1 and r.enforce and r.ban > 0 then
      start_ban(r, v, now)
      save(r, now)
    end
    return {now, v[1], v[2], v[3], v[4], v[5], v[6]}
  end
  local held = held_total(set, now)
  if held > 0 then
    local w = test_rule(r, now, cost + held)
    if w[1] ~= 0 then
      return {now, 4, w[2], w[3], math.max(0, w[4]), IN_FLIGHT_US, w[6]}
    end
  end
  held_add(set, now, ARGV[3], cost, tonumber(ARGV[4]))
  return {now, 0, v[2], v[3], v[4], 0, v[6]}
end

-- settle ARGV: pinned now, cost, reservation id, spend (1 for a failure, else 0), then the rule.
-- Drops the reservation; a failure then spends 'cost' as a check would (a refusal starting an
-- enforcing rule's ban). Returns the spending's verdict as reserve does, or an allowing one.
local function settle(KEYS, ARGV)
  local now = clock(ARGV[1])
  local cost = tonumber(ARGV[2])
  local r = parse_rules(KEYS, ARGV, 5, 1)[1]
  held_drop(KEYS[#KEYS], now, ARGV[3], cost)
  if ARGV[4] ~= '1' then
    return {now, 0, 0, 0, 0, 0, -1}
  end
  load(r, now)
  local v = test_rule(r, now, cost)
  if v[1] == 0 then
    for _, l in ipairs(r.limits) do commit(l, now, cost) end
    save(r, now)
  elseif v[1] == 1 and r.enforce and r.ban > 0 then
    start_ban(r, v, now)
    save(r, now)
  end
  return {now, v[1], v[2], v[3], v[4], v[5], v[6]}
end
