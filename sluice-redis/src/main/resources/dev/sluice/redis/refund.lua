-- Gives back what evaluate.lua consumed at time ARGV[2] for rules whose check was refused
-- by a rule on another cluster slot (consume-then-refund; see RedisStore). Each limit undoes
-- its commit as far as the state still holds it; time moved on meanwhile, so a refund never
-- gives back more than was taken and never touches bans.
-- ARGV[1] pinned now (tests only), ARGV[2] commit time, ARGV[3] cost, ARGV[4] rule count, then
-- the rules as in limits.lua.
local function refund(KEYS, ARGV)
  local now = clock(ARGV[1])
  local at = tonumber(ARGV[2])
  local cost = tonumber(ARGV[3])
  local rules = parse_rules(KEYS, ARGV, 5, tonumber(ARGV[4]))

  for _, r in ipairs(rules) do
    local raw = redis.call('GET', r.key)
    if raw and string.sub(raw, 1, #r.sig + 1) == r.sig .. ',' then
      load(r, now)
      for _, l in ipairs(r.limits) do
        local s = l.s
        if l.kind == 'T' then
          s[1] = s[1] - cost * l.p2
        elseif l.kind == 'F' then
          if s[1] == idiv(at, l.p2) then s[2] = math.max(0, s[2] - cost) end
        elseif l.kind == 'W' then
          local index = idiv(at, l.p2)
          if s[1] == index then
            s[3] = math.max(0, s[3] - cost)
          elseif s[1] == index + 1 then
            s[2] = math.max(0, s[2] - cost)
          end
        elseif l.kind == 'L' then
          redis.call('ZPOPMAX', l.log, cost)
        elseif l.kind == 'N' then
          leaky_refund(l, at, cost)
        else
          -- Rebasing the score to now would round its decay differently from a state that was
          -- never touched; when the state is still the one our commit wrote, restore the one
          -- before it instead.
          local before = {kind = 'S', p3 = l.p3, s = {s[3], s[4]}}
          if s[2] == math.max(at, s[4]) and s[1] == score_decayed(before, at) + l.p2 * cost then
            s[1], s[2] = s[3], s[4]
          else
            s[1] = math.max(0, score_decayed(l, now) - l.p2 * cost)
            s[2] = math.max(now, s[2])
          end
        end
      end
      save(r, now)
    end
  end
  return 1
end
