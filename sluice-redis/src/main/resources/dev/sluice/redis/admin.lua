-- The admin API's view of one key (MemoryAdmin in Lua). Never on a decision's path.
--
-- peek: KEYS and ARGV[2..] as evaluate.lua for one rule; ARGV[1] pinned now. Changes nothing.
-- Returns {now, present (1|0), ban left, then per limit: remaining and reset (a call of cost 0),
-- retryAfter (0 when a call of cost 1 would pass)}; durations in microseconds.
local function peek(KEYS, ARGV)
  local now = clock(ARGV[1])
  local r = parse_rules(KEYS, ARGV, 2, 1)[1]
  local raw = redis.call('GET', r.key)
  local present = 0
  if raw and string.sub(raw, 1, #r.sig + 1) == r.sig .. ',' then present = 1 end
  load(r, now)
  local out = {now, present, math.max(0, r.banUntil - now)}
  for _, l in ipairs(r.limits) do
    local _, rem, rst = test(l, now, 0)
    local ok, _, _, ra = test(l, now, 1)
    if present == 0 then rst = 0 end
    out[#out + 1] = rem
    out[#out + 1] = math.max(0, rst)
    if ok then out[#out + 1] = 0 else out[#out + 1] = math.max(1, ra) end
  end
  return out
end

-- unban: as peek. Ends the rule's ban now, leaving its limits as they are; 1 if it was banned.
local function unban(KEYS, ARGV)
  local now = clock(ARGV[1])
  local r = parse_rules(KEYS, ARGV, 2, 1)[1]
  load(r, now)
  if r.banUntil - now <= 0 then return 0 end
  r.banUntil = now
  save(r, now)
  return 1
end

-- ban: as peek, with ARGV[2] the ban's length in microseconds and the rule from ARGV[3]. Sets
-- the rule's ban to end that long after now (an operator's ban), leaving its limits; 1.
local function ban(KEYS, ARGV)
  local now = clock(ARGV[1])
  local r = parse_rules(KEYS, ARGV, 3, 1)[1]
  load(r, now)
  r.banUntil = now + tonumber(ARGV[2])
  save(r, now)
  return 1
end

-- note: KEYS[1] a rule's sorted set of refused keys; ARGV[1] pinned now, ARGV[2] the key text,
-- ARGV[3] how many to keep, ARGV[4] its TTL in ms. Adds or moves the key to now, drops the
-- oldest past the bound.
local function note(KEYS, ARGV)
  local now = clock(ARGV[1])
  redis.call('ZADD', KEYS[1], now, ARGV[2])
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[3]) + 1))
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return 1
end
