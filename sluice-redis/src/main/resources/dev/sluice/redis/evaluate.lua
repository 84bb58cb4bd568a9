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
    local v = test_rule(r, now, cost)
    r.v = v
    if v[1] ~= 0 and r.enforce then pass = false end
  end

  for i, r in ipairs(rules) do
    local v = r.v
    if pass and v[1] == 0 then
      for _, l in ipairs(r.limits) do commit(l, now, cost) end
      save(r, now)
    elseif not pass and v[1] == 1 and r.enforce and r.ban > 0 then
      start_ban(r, v, now)
      save(r, now)
    end
    for x = 1, 6 do out[#out + 1] = v[x] end
  end
  return out
end
