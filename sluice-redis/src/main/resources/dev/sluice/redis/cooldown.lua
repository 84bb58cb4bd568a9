-- One event of an escalating cooldown (Cooldown.apply and reserve in Lua), state 'windowStart,
-- failures,level,lockedUntil' in microseconds.
-- KEYS[1] the key, KEYS[2] its set of reservations (held.lua) for R and a settlement. ARGV:
-- pinned now, event (C check | F failure | S success | R reserve | N none), maxRetries,
-- retryWindow, cooldown, maxCooldown; then for R and a settlement the reservation id, and for R
-- its ttl. A settlement (F, S or N with an id) drops the reservation, then applies its event.
-- Returns {now, type, limit index, remaining, reset, retryAfter, score} like evaluate.lua (type
-- 4: R refused in flight).
local function cooldown(KEYS, ARGV)
  local now = clock(ARGV[1])
  local event = ARGV[2]
  local max_retries = tonumber(ARGV[3])
  local window = tonumber(ARGV[4])
  local base = tonumber(ARGV[5])
  local max_lock = tonumber(ARGV[6])

  local s = {now, 0, 0, now}
  local raw = redis.call('GET', KEYS[1])
  if raw then
    local x = 1
    for v in string.gmatch(raw, '[^,]+') do
      s[x] = tonumber(v)
      x = x + 1
    end
  end

  local function failures()
    if now - s[1] >= window then return 0 end
    return s[2]
  end

  local function level()
    if s[3] > 0 and now - s[4] >= max_lock then return 0 end
    return s[3]
  end

  local function lock_for(lv)
    if lv >= 62 or base * 2 ^ lv > max_lock then return max_lock end
    return base * 2 ^ lv
  end

  local function reset()
    local w, lv = 0, 0
    if s[2] > 0 then w = math.max(0, s[1] + window - now) end
    if s[3] > 0 then lv = math.max(0, s[4] + max_lock - now) end
    return math.max(w, lv)
  end

  local function save()
    local ttl = math.max(s[4] - now, 0)
    if failures() > 0 then ttl = math.max(ttl, s[1] + window - now) end
    if level() > 0 then ttl = math.max(ttl, s[4] + max_lock - now) end
    if ttl > 0 then
      redis.call('SET', KEYS[1], fmt(s[1]) .. ',' .. fmt(s[2]) .. ',' .. fmt(s[3]) .. ','
        .. fmt(s[4]), 'PX', ttl_ms(ttl))
    else
      redis.call('DEL', KEYS[1])
    end
  end

  local id = ARGV[7]
  if id and event ~= 'R' then
    held_drop(KEYS[2], now, id, 1)
  end
  if event == 'N' then
    return {now, 0, 0, 0, 0, 0, -1}
  end
  local locked_for = s[4] - now
  if event == 'S' then
    -- Failures and escalation start over; a lock in force stays.
    local until_ = s[4]
    s = {now, 0, 0, now}
    if locked_for > 0 then
      s[4] = until_
      save()
      return {now, 3, -1, 0, locked_for, locked_for, -1}
    end
    save()
    return {now, 0, 0, max_retries, 0, 0, -1}
  end
  if locked_for > 0 then
    return {now, 3, -1, 0, locked_for, locked_for, -1}
  end
  local f = failures()
  if event == 'C' then
    return {now, 0, 0, max_retries - f, reset(), 0, -1}
  end
  if event == 'R' then
    local left = max_retries - f - held_total(KEYS[2], now)
    if left <= 0 then
      return {now, 4, 0, 0, reset(), IN_FLIGHT_US, -1}
    end
    held_add(KEYS[2], now, id, 1, tonumber(ARGV[8]))
    return {now, 0, 0, left - 1, reset(), 0, -1}
  end
  if f == 0 then s[1] = now end
  f = f + 1
  s[3] = level()
  if f >= max_retries then
    local lock = lock_for(s[3])
    s[2] = 0
    s[3] = s[3] + 1
    s[4] = now + lock
    save()
    return {now, 2, 0, 0, lock + max_lock, lock, -1}
  end
  s[2] = f
  save()
  return {now, 0, 0, max_retries - f, reset(), 0, -1}
end
