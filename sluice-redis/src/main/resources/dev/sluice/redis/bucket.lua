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
-- KEYS[1] the rule key. ARGV: pinned now, cost, signature .. ',0,', burst * interval,
-- interval (us). Returns one integer: reset (>= 0) when allowed, -1 - backlog when refused; the
-- client, which knows the parameters, derives remaining and retry-after exactly as test() does
-- (remaining = floor((cap - reset) / interval); refused: reset = backlog, retry = backlog +
-- cost * interval - cap).
local function bucket(KEYS, ARGV)
  local now = clock(ARGV[1])
  local cost = tonumber(ARGV[2])
  local prefix = ARGV[3]
  local cap = tonumber(ARGV[4])
  local interval = tonumber(ARGV[5])
  local key = KEYS[1]
  local ban, tat = 0, now
  local raw = redis.call('GET', key)
  if raw then
    if string.sub(raw, 1, #prefix) == prefix then
      tat = tonumber(string.sub(raw, #prefix + 1))
    else
      local s, b, t = string.match(raw, '^([^,]*),([^,]*),([^,]*)')
      if s == string.sub(prefix, 1, -4) then
        prefix = s .. ',' .. b .. ','
        ban, tat = tonumber(b), tonumber(t)
      end
    end
  end
  local base = tat
  if now > base then base = now end
  local ahead = base + cost * interval - now
  if ahead > cap then
    return -1 - (base - now)
  end
  local ttl = ban - now
  if ahead > ttl then ttl = ahead end
  if ttl > 0 then
    redis.call('PSETEX', key, ttl_ms(ttl), prefix .. fmt(base + cost * interval))
  else
    redis.call('DEL', key)
  end
  return ahead
end
