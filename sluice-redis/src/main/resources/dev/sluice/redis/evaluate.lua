-- One check over one or more rules, atomically (MemoryStore.decide in Lua): banned keys are
-- refused without touching counters; every limit is tested; if every enforcing rule allows,
-- every allowing rule consumes 'cost'; otherwise nothing is consumed and each refused enforcing
-- rule with a ban starts it.
--
-- ARGV[1] pinned now (tests only; empty in production), ARGV[2] cost, ARGV[3] rule count, then
-- the rules as described in limits.lua.
-- Returns {now, then per rule: type, limit index, remaining, reset, retryAfter, score}, with
-- type 0 allowed, 1 refused, 2 refused and ban started, 3 banned; durations in microseconds.
local function evaluate(KEYS, ARGV)
  local now = clock(ARGV[1])
  local cost = tonumber(ARGV[2])
  local rules = parse_rules(KEYS, ARGV, 4, tonumber(ARGV[3]))

  local out = {now}
  local pass = true
  for i, r in ipairs(rules) do
    load(r, now)
    local v
    local ban_left = r.banUntil - now
    if r.ban > 0 and ban_left > 0 then
      v = {3, -1, 0, ban_left, ban_left, -1}
    else
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
        v = {1, refused, remaining, reset, retry, score}
      else
        v = {0, binding, remaining, reset, 0, score}
      end
    end
    r.v = v
    if v[1] ~= 0 and r.enforce then pass = false end
  end

  for i, r in ipairs(rules) do
    local v = r.v
    if pass and v[1] == 0 then
      for _, l in ipairs(r.limits) do commit(l, now, cost) end
      save(r, now)
    elseif not pass and v[1] == 1 and r.enforce and r.ban > 0 then
      r.banUntil = now + r.ban
      v[1] = 2
      v[4] = math.max(v[4], r.ban)
      v[5] = r.ban
      save(r, now)
    end
    for x = 1, 6 do out[#out + 1] = v[x] end
  end
  return out
end
