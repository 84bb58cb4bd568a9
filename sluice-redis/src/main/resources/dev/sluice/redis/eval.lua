-- Prepended to the EVAL scripts only (the fallback for servers without Redis 7 functions).
-- Redis 7 replicates a script's effects, so reading TIME before writing is allowed; on Redis 5
-- and 6 we ask for it explicitly. (Functions are Redis 7 only and may not call this at load.)
if redis.replicate_commands then pcall(redis.replicate_commands) end
