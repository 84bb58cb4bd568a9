-- Shared by every Sluice script. Scripts.java assembles these files twice: as one Redis 7
-- function library (FUNCTION LOAD once, then FCALL: the helpers below are created once per
-- library load, not on every call) and as one EVAL script per entry point (the fallback for
-- servers without FUNCTION). Each entry point is a local function of (KEYS, ARGV), so the same
-- text runs both ways. Library code must not create globals, and upvalues outlive a call: every
-- entry point starts with clock(), which sets PINNED afresh.
--
-- Time is microseconds from the Redis server's TIME (about 1.7e15 today, exact in a Lua double,
-- whose integers are exact up to 2^53 = 9.0e15). The Java stores count nanoseconds; the client
-- converts parameters to microseconds and multiplies returned durations by 1000.
--
-- Lua numbers are doubles and tostring keeps only 14 significant digits, so:
--  * numbers written to Redis go through fmt ('%d' formats the full 64-bit integer);
--  * numbers returned to the client are integer replies, never strings;
--  * a * b / c and a / b go through exact integer helpers below, never plain '/'.
local TWO53 = 9007199254740992

-- Tests may pin the clock to replay a trace (RedisStore.Builder#pinnedClock); production never
-- does. Pinned time runs apart from real time, so TTLs then get an hour of margin.
local PINNED = false

local function clock(pinned)
  if pinned ~= nil and pinned ~= '' then
    PINNED = true
    return tonumber(pinned)
  end
  PINNED = false
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function fmt(x)
  return string.format('%d', x)
end

-- floor(a / b) for integers, b > 0, exact (a double quotient may round up to the next integer).
local function idiv(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  while r < 0 do q = q - 1; r = r + b end
  while r >= b do q = q + 1; r = r - b end
  return q
end

-- floor(a * b / c) and the remainder, exact for non-negative integers a, b < 2^53, 0 < c < 2^52,
-- as long as the quotient is below 2^53. Products past 2^53 use shift-and-add over b's bits.
local function muldiv(a, b, c)
  if b > a then a, b = b, a end
  local p = a * b
  if p < TWO53 then
    local q = idiv(p, c)
    return q, p - q * c
  end
  local aq = idiv(a, c)
  local ar = a - aq * c
  local bit = 1
  while bit * 2 <= b do bit = bit * 2 end
  local q, r = 0, 0
  while bit >= 1 do
    q = q * 2; r = r * 2
    if r >= c then q = q + 1; r = r - c end
    if b >= bit then
      b = b - bit
      q = q + aq; r = r + ar
      if r >= c then q = q + 1; r = r - c end
    end
    bit = bit / 2
  end
  return q, r
end

local function muldiv_floor(a, b, c)
  local q = muldiv(a, b, c)
  return q
end

local function muldiv_ceil(a, b, c)
  local q, r = muldiv(a, b, c)
  if r > 0 then return q + 1 end
  return q
end

-- Milliseconds for PEXPIRE: the time until the state is fresh, rounded up, plus a margin.
local function ttl_ms(us)
  local margin = 1000
  if PINNED then margin = 3600000 end
  return fmt(idiv(us + 999, 1000) + margin)
end
