-- The common shape on its own path: one rule, one token bucket, no ban (LettuceStore picks it).
-- Same state string and transitions as evaluate.lua for that shape, without its tables, loops
-- and closures: a decision is TIME, GET, and on success one PSETEX. Every step here was measured
-- (Redis CPU per call, docs/bench/redis.md): each redis.call costs about as much as the command
-- itself, so there are three; a reply table costs more than the arithmetic, so the reply is
-- one integer; string.match and string.format are the dearest Lua calls, so the usual state
-- (no ban) is read with one prefix compare and written with one format.
--
-- Worked example: burst 10, interval 100000 us (10 per second), state 'sig,0,T' with T = now +
-- 250000 (2.5 tokens owed). cap = 1e6; ahead = T + 100000 - now = 350000 <= cap: allowed,
-- remaining floor((1e6 - 350000) / 100000) = 6, reset 350000 us, new T = now + 350000, key kept
-- for 350 ms + the 1 s margin. A banUntil left by an older version of the rule that had a ban
-- is carried over unchanged (as evaluate.lua does) and still counts toward the TTL.
--
-- bucket: one decision. KEYS[1] the rule key. ARGV: pinned now, cost, signature .. ',0,',
-- burst * interval, interval (us). Returns one integer: reset (>= 0) when allowed, -1 - backlog
-- when refused; the client, which knows the parameters, derives remaining and retry-after
-- exactly as test() does (remaining = floor((cap - reset) / interval); refused: reset =
-- backlog, retry = backlog + cost * interval - cap).
--
-- buckets: concurrent decisions of one client, in one call (RedisStore batches them on a
-- standalone server). KEYS: two or more, one per decision, in order. ARGV: pinned now, the
-- number of rule shapes s, s triples (signature .. ',0,', burst * interval, interval), '1' if
-- a key may repeat (else '0'), then either one cost (every decision of shape 1 at that cost)
-- or, per decision, its shape (1-based) and cost. Returns one integer per decision, as bucket.
-- Each decision is the same transition as bucket's, run in order: a repeated key reads what
-- the decision before it left, and is written once, with its last state (a hot key, such as
-- one address behind a NAT, costs one PSETEX per call instead of one per decision). Why: on a 2-vCPU VM an FCALL of bucket cost 10-15 us of Redis
-- CPU, most of it the call itself (the request, dispatch, TIME, the reply, the socket); in
-- calls of 64 a decision costs 4.3-4.6 us: one MGET's share and one PSETEX, about 1.5 us each
-- on random keys, and the Lua. The uniform cost and the repeat flag save about 0.4 and 0.3 us
-- a decision (no per-decision arguments to parse, no table of what was written).

-- The state raw (false when absent) as (prefix, ban, tat), prefix ending in the ban field and
-- its comma: the rule's own prefix and a fresh bucket when raw is absent or another rule's.
local function parse(raw, now, prefix)
  if raw then
    if string.find(raw, prefix, 1, true) == 1 then
      return prefix, 0, tonumber(string.sub(raw, #prefix + 1))
    end
    local s, b, t = string.match(raw, '^([^,]*),([^,]*),([^,]*)')
    if s == string.sub(prefix, 1, -4) then
      return s .. ',' .. b .. ',', tonumber(b), tonumber(t)
    end
  end
  return prefix, 0, now
end

-- One decision on the state (ban, tat): the reply, the new tat (nil when refused: nothing is
-- written) and the TTL in microseconds (<= 0: the state is fresh again and is deleted).
local function step(ban, tat, now, cost, cap, interval)
  local base = tat
  if now > base then base = now end
  local ahead = base + cost * interval - now
  if ahead > cap then
    return -1 - (base - now), nil, 0
  end
  local ttl = ban - now
  if ahead > ttl then ttl = ahead end
  return ahead, base + cost * interval, ttl
end

local function store(key, prefix, tat, ttl)
  if ttl > 0 then
    redis.call('PSETEX', key, ttl_ms(ttl), prefix .. fmt(tat))
  else
    redis.call('DEL', key)
  end
end

local function bucket(KEYS, ARGV)
  local now = clock(ARGV[1])
  local key = KEYS[1]
  local prefix, ban, tat = parse(redis.call('GET', key), now, ARGV[3])
  local r, after, ttl = step(ban, tat, now, tonumber(ARGV[2]), tonumber(ARGV[4]),
    tonumber(ARGV[5]))
  if after ~= nil then store(key, prefix, after, ttl) end
  return r
end

local function buckets(KEYS, ARGV)
  local now = clock(ARGV[1])
  local shapes = tonumber(ARGV[2])
  local prefix, cap, interval = {}, {}, {}
  for i = 1, shapes do
    prefix[i] = ARGV[3 * i]
    cap[i] = tonumber(ARGV[3 * i + 1])
    interval[i] = tonumber(ARGV[3 * i + 2])
  end
  local at = 3 * shapes + 3
  local repeats = ARGV[at] == '1'
  local uniform = #ARGV == at + 1
  local s, cost = 1, tonumber(ARGV[at + 1])
  local n = #KEYS
  local raws = redis.call('MGET', unpack(KEYS))
  local out = {}
  -- Keys that may repeat: a key's state after each decision stays here (pres, tats; tat false
  -- when deleted), the next decision on it starts from there, and each key is written once at
  -- the end, with its last state and TTL (ttls, in the order first written).
  local pres, tats, ttls, order
  if repeats then pres, tats, ttls, order = {}, {}, {}, {} end
  for i = 1, n do
    local key = KEYS[i]
    local raw = raws[i]
    if not uniform then
      s, cost = tonumber(ARGV[at + 2 * i - 1]), tonumber(ARGV[at + 2 * i])
    end
    local pre, ban, tat
    local known = nil
    if repeats then known = tats[key] end
    if known and pres[key] == prefix[s] then
      pre, ban, tat = prefix[s], 0, known
    else
      if known then
        raw = pres[key] .. fmt(known)
      elseif known == false then
        raw = false
      end
      pre, ban, tat = parse(raw, now, prefix[s])
    end
    local r, after, ttl = step(ban, tat, now, cost, cap[s], interval[s])
    if after ~= nil then
      if not repeats then
        store(key, pre, after, ttl)
      else
        if ttls[key] == nil then order[#order + 1] = key end
        ttls[key] = ttl
        if ttl > 0 then
          pres[key], tats[key] = pre, after
        else
          tats[key] = false
        end
      end
    end
    out[i] = r
  end
  if repeats then
    for j = 1, #order do
      local key = order[j]
      store(key, pres[key], tats[key], ttls[key])
    end
  end
  return out
end
