-- Floe's Redis Streams local tier: the server-side steps that must be atomic per partition.
-- Loaded as a FUNCTION library (name and version line added by the client). Every key of one
-- call belongs to one partition and shares its hash slot ({<ns>:<topic>:<p>}).
--
-- Keys of a partition:
--   meta   hash: next (log end), last_ms (last entry id ms), start (first local offset),
--          floor (DeleteRecords floor), offloaded (marker), seg_* (active segment), max_ts/max_ts_off
--   stream one entry per record, id <append ms>-<offset>, fields offset timestamp [key] [value] [headers]
--   idx    zset: per append, score = base offset, member "<base>:<ms>" (offset -> entry id)
--   prod   hash: producer id -> "epoch;first_seq,last_seq,first_off,last_off,ts;..." (newest last)
--   segs   list: sealed segments, oldest first: "base,next,bytes,first_ts,max_ts,created,batches"
--
-- Numbers travel as decimal strings; Lua numbers are doubles (exact below 2^53).

local function s(x) return string.format('%.0f', x) end

-- Offsets as text without a string.format per record: the last three digits come from these
-- tables, the rest (the same for a thousand offsets) is formatted once. Filled by the first
-- append (the standard libraries are not reachable while the library loads).
local digits, digits3 = nil, nil
local function fill_digits()
  digits, digits3 = {}, {}
  for i = 0, 999 do
    digits[i] = string.format('%d', i)
    digits3[i] = string.format('%03d', i)
  end
end
local function num(v, d) if v then return tonumber(v) end return d end

local function dec_state(v)
  if not v then return nil end
  local st = { recent = {} }
  local first = true
  for part in string.gmatch(v, '[^;]+') do
    if first then
      st.epoch = tonumber(part)
      first = false
    else
      local a, b, c, d, e = string.match(part, '^(-?%d+),(-?%d+),(-?%d+),(-?%d+),(-?%d+)$')
      table.insert(st.recent, { fs = tonumber(a), ls = tonumber(b), fo = tonumber(c), lo = tonumber(d), ts = tonumber(e) })
    end
  end
  return st
end

local function enc_state(st)
  local t = { s(st.epoch) }
  for _, m in ipairs(st.recent) do
    t[#t + 1] = s(m.fs) .. ',' .. s(m.ls) .. ',' .. s(m.fo) .. ',' .. s(m.lo) .. ',' .. s(m.ts)
  end
  return table.concat(t, ';')
end

-- Kafka's idempotence rules, as log::partition_log applies them.
local function check(st, epoch, fs, ls)
  if not st then return 'ok' end
  if epoch < st.epoch then return 'invalid_producer_epoch' end
  if epoch ~= st.epoch then
    if fs == 0 or st.epoch < 0 then return 'ok' end
    return 'out_of_order_sequence'
  end
  for _, m in ipairs(st.recent) do
    if m.fs == fs and m.ls == ls then return 'duplicate', m end
  end
  if #st.recent == 0 then return 'ok' end
  local last = st.recent[#st.recent].ls
  if fs == last + 1 or (fs == 0 and last == 2147483647) then return 'ok' end
  return 'out_of_order_sequence'
end

local function apply(st, epoch, fs, ls, fo, lo, ts)
  if not st or st.epoch ~= epoch then st = { epoch = epoch, recent = {} } end
  table.insert(st.recent, { fs = fs, ls = ls, fo = fo, lo = lo, ts = ts })
  while #st.recent > 5 do table.remove(st.recent, 1) end
  return st
end

local meta_fields = { 'next', 'last_ms', 'start', 'floor', 'seg_base', 'seg_bytes', 'seg_created',
  'seg_first_ts', 'seg_max_ts', 'seg_batches', 'max_ts', 'max_ts_off' }

local function load_meta(key)
  local v = redis.call('HMGET', key, unpack(meta_fields))
  local m = {}
  for i, f in ipairs(meta_fields) do m[f] = v[i] end
  m.next = num(m.next, 0)
  m.last_ms = num(m.last_ms, 0)
  m.start = num(m.start, 0)
  m.floor = num(m.floor, 0)
  m.seg_base = num(m.seg_base, 0)
  m.seg_bytes = num(m.seg_bytes, 0)
  m.seg_batches = num(m.seg_batches, 0)
  m.seg_first_ts = num(m.seg_first_ts, -1)
  m.seg_max_ts = num(m.seg_max_ts, -1)
  m.max_ts = num(m.max_ts, -1)
  m.max_ts_off = num(m.max_ts_off, -1)
  return m
end

-- The segment clock (a segment's `created`, segment.ms) is Redis's own, not the calling broker's:
-- brokers' wall clocks disagree and may be stepped, and a segment created by a broker whose clock
-- ran ahead would not roll by segment.ms for as long as it ran ahead (a day for a day's step: no
-- sealed segment, so no offload and no local retention; seen in a chaos run, tests/chaos/README.md).
local function server_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- True when the active segment is due by time: older than seg_ms, or created in the future (a
-- Redis clock stepped back, or a segment created by a broker clock before this library).
local function due_by_time(m, now, seg_ms)
  local age = now - num(m.seg_created, now)
  return age < 0 or age >= seg_ms
end

-- Seals the active segment (when not empty) into segs; the next one starts at `next`.
local function seal(meta, segs, m, now)
  if m.seg_batches == 0 then return false end
  local created = num(m.seg_created, now)
  redis.call('RPUSH', segs, s(m.seg_base) .. ',' .. s(m.next) .. ',' .. s(m.seg_bytes) .. ',' .. s(m.seg_first_ts)
    .. ',' .. s(m.seg_max_ts) .. ',' .. s(created) .. ',' .. s(m.seg_batches))
  m.seg_base, m.seg_bytes, m.seg_batches, m.seg_first_ts, m.seg_max_ts = m.next, 0, 0, -1, -1
  m.seg_created = s(now)
  redis.call('HSET', meta, 'seg_base', s(m.seg_base), 'seg_bytes', '0', 'seg_batches', '0',
    'seg_first_ts', '-1', 'seg_max_ts', '-1', 'seg_created', m.seg_created)
  return true
end

-- KEYS: meta stream idx prod segs
-- ARGV: now_ms segment_bytes segment_ms log_append_time(0|1) request_bytes n_batches flags mirror(0|1)
--       (flags: one character per record, '0' + 1 when the key is not null + 2 when the value
--       is not null), then per batch 8: producer_id epoch first_seq last_seq record_count
--       min_ts max_ts base_offset, then one argument holding every record's key, headers and
--       timestamp (decimal text), each as a 4-byte little-endian length and its bytes, then one
--       argument per record: its value. (Redis parses, copies and frees each argument of a
--       call: four per record cost about a fifth of an append's server time. Values stay
--       arguments of their own because Lua hashes every byte of each string it creates: cut
--       out of a blob they would be hashed twice.)
-- Produce (mirror 0): offsets are taken here, base_offset is ignored. Mirror (ingest, mirror 1):
-- batches keep the source's base offsets (gaps allowed, increasing), refused with
-- 'below_log_end' when the first is below the log end; no producer checks.
-- Returns {status, base, last, log_start, append_ms}. Nothing is written unless every batch
-- passes the checks.
local function append(keys, args)
  local meta, stream, idx, prod, segs = keys[1], keys[2], keys[3], keys[4], keys[5]
  local now = tonumber(args[1])
  local seg_limit, seg_ms = tonumber(args[2]), tonumber(args[3])
  local lat = args[4] == '1'
  local req_bytes, nb = tonumber(args[5]), tonumber(args[6])
  local flags = args[7]
  local mirror = args[8] == '1'
  local m = load_meta(meta)
  local log_start = math.max(m.start, m.floor)
  local staged = {}
  local batches = {}
  local pos = 9
  local off = m.next
  local total = 0
  for b = 1, nb do
    local bt = { pid = tonumber(args[pos]), epoch = tonumber(args[pos + 1]), fs = tonumber(args[pos + 2]),
      ls = tonumber(args[pos + 3]), n = tonumber(args[pos + 4]), min_ts = tonumber(args[pos + 5]),
      max_ts = tonumber(args[pos + 6]) }
    if mirror then
      local base = tonumber(args[pos + 7])
      if b == 1 and base < m.next then return { 'below_log_end', '-1', '-1', s(log_start), '-1' } end
      off = base
    end
    pos = pos + 8
    bt.base = off
    off = off + bt.n
    total = total + bt.n
    if bt.pid >= 0 then
      local st = staged[bt.pid]
      if st == nil then st = dec_state(redis.call('HGET', prod, s(bt.pid))) or false end
      local status, dup = check(st or nil, bt.epoch, bt.fs, bt.ls)
      if status == 'duplicate' then
        if nb ~= 1 then return { 'invalid_record', '-1', '-1', s(log_start), '-1' } end
        local ts = '-1'
        if lat then ts = s(dup.ts) end
        return { 'duplicate', s(dup.fo), s(dup.lo), s(log_start), ts }
      end
      if status ~= 'ok' then return { status, '-1', '-1', s(log_start), '-1' } end
      staged[bt.pid] = apply(st or nil, bt.epoch, bt.fs, bt.ls, bt.base, off - 1, bt.max_ts)
    end
    batches[b] = bt
  end
  if #flags ~= total or args[pos] == nil or args[pos + total] == nil or args[pos + total + 1] ~= nil then
    return redis.error_reply('FLOE_ARG append arguments do not match the batches')
  end
  -- Everything checked: from here on only writes.
  local ms = math.max(now, m.last_ms)
  local seg_now = server_ms()
  if m.seg_batches > 0 and (m.seg_bytes + req_bytes > seg_limit or due_by_time(m, seg_now, seg_ms)) then
    seal(meta, segs, m, seg_now)
  end
  if not m.seg_created then m.seg_created = s(seg_now) end
  local first = batches[1].base
  if mirror and m.seg_batches == 0 and first > m.seg_base then
    -- An empty active segment starts at the first mirrored offset; with nothing sealed either,
    -- so does the log.
    m.seg_base = first
    if redis.call('LLEN', segs) == 0 then
      m.start = first
      redis.call('HSET', meta, 'start', s(first))
    end
  end
  local ms_s = s(ms)
  local ms_dash = ms_s .. '-'
  if not digits then fill_digits() end
  local blob, bp = args[pos], 1
  local o = first
  local ri = 0
  local high, high_s = -1, ''
  for b = 1, nb do
    local bt = batches[b]
    o = bt.base
    for _ = 1, bt.n do
      local k, h, ts
      k, h, ts, bp = struct.unpack('<i4c0i4c0i4c0', blob, bp)
      local v = args[pos + ri + 1]
      ri = ri + 1
      if lat then ts = ms_s end
      local low = o % 1000
      if o - low ~= high then
        high = o - low
        if high == 0 then high_s = '' else high_s = s(high / 1000) end
      end
      local os
      if high_s == '' then os = digits[low] else os = high_s .. digits3[low] end
      local id = ms_dash .. os
      local fl = string.byte(flags, ri) - 48
      -- The common shapes without building a table.
      if h == '' and fl == 3 then
        redis.call('XADD', stream, id, 'offset', os, 'timestamp', ts, 'key', k, 'value', v)
      elseif h == '' and fl == 2 then
        redis.call('XADD', stream, id, 'offset', os, 'timestamp', ts, 'value', v)
      else
        local f = { 'XADD', stream, id, 'offset', os, 'timestamp', ts }
        if fl % 2 == 1 then f[#f + 1] = 'key'; f[#f + 1] = k end
        if fl >= 2 then f[#f + 1] = 'value'; f[#f + 1] = v end
        if h ~= '' then f[#f + 1] = 'headers'; f[#f + 1] = h end
        redis.call(unpack(f))
      end
      o = o + 1
    end
    local bmax, bmin = bt.max_ts, bt.min_ts
    if lat then bmax, bmin = ms, ms end
    if bmax > m.max_ts then m.max_ts, m.max_ts_off = bmax, bt.base + bt.n - 1 end
    if m.seg_first_ts < 0 or bmin < m.seg_first_ts then m.seg_first_ts = bmin end
    if bmax > m.seg_max_ts then m.seg_max_ts = bmax end
  end
  redis.call('ZADD', idx, s(first), s(first) .. ':' .. ms_s)
  for pid, st in pairs(staged) do redis.call('HSET', prod, s(pid), enc_state(st)) end
  local base = first
  log_start = math.max(m.start, m.floor)
  redis.call('HSET', meta, 'next', s(o), 'last_ms', ms_s, 'seg_bytes', s(m.seg_bytes + req_bytes),
    'seg_batches', s(m.seg_batches + nb), 'seg_first_ts', s(m.seg_first_ts), 'seg_max_ts', s(m.seg_max_ts),
    'seg_created', m.seg_created, 'seg_base', s(m.seg_base), 'max_ts', s(m.max_ts), 'max_ts_off', s(m.max_ts_off))
  local at = '-1'
  if lat then at = ms_s end
  return { 'ok', s(base), s(o - 1), s(log_start), at }
end

-- The entry id of `offset` (or of the next entry after it): "<ms>-<offset>".
local function entry_id(idx, offset)
  local r = redis.call('ZREVRANGEBYSCORE', idx, s(offset), '-inf', 'LIMIT', '0', '1')
  if #r == 0 then return '0-' .. s(offset) end
  local ms = string.match(r[1], ':(%d+)$')
  return ms .. '-' .. s(offset)
end

-- KEYS: meta idx   ARGV: offset
-- Returns {status, log_start, next, id}: status 'ok' or 'out_of_range'; id is the entry id to
-- read `offset` from (XRANGE id + ...), '' when `offset` is the log end. The entries themselves
-- are read by the caller with XRANGE: passing thousands of them through Lua (a table per
-- entry, then back to RESP) cost more than the extra round trip.
local function read(keys, args)
  local v = redis.call('HMGET', keys[1], 'start', 'floor', 'next')
  local start, floor, nxt = num(v[1], 0), num(v[2], 0), num(v[3], 0)
  local ls = math.max(start, floor)
  local offset = tonumber(args[1])
  if offset < ls or offset > nxt then return { 'out_of_range', s(ls), s(nxt), '' } end
  if offset == nxt then return { 'ok', s(ls), s(nxt), '' } end
  return { 'ok', s(ls), s(nxt), entry_id(keys[2], offset) }
end

-- KEYS: meta segs   ARGV: now_ms [segment_ms]
-- Seals the active segment when it is not empty (with segment_ms: only when due by time, on the
-- segment clock: now_ms, the broker's clock, is not used).
local function roll(keys, args)
  local m = load_meta(keys[1])
  local now = server_ms()
  if args[2] and not due_by_time(m, now, tonumber(args[2])) then return 0 end
  if seal(keys[1], keys[2], m, now) then return 1 end
  return 0
end

-- Fencing: the storage worker's lease on the partition is the hash `lease` (fields holder,
-- epoch, expires; written by the floe_coord library) in this partition's slot. A write passed
-- an epoch runs only while that epoch is the lease's current one: a paused former holder
-- (its lease expired and taken by another broker, whose epoch is higher) is refused.
local function fenced(lease, epoch)
  if not lease then return nil end
  if not epoch or not tonumber(epoch) then return redis.error_reply('FLOE_ARG a lease key needs an epoch') end
  local cur = tonumber(redis.call('HGET', lease, 'epoch') or '0')
  if cur ~= tonumber(epoch) then
    return redis.error_reply('FLOE_FENCED epoch ' .. tostring(epoch) .. ' is not the current lease epoch ' ..
      s(cur) .. ' of ' .. lease)
  end
  return nil
end

-- KEYS: meta [lease]   ARGV: op value [epoch]
--   offloaded: marker := max(marker, value)
--   rewind:    marker := max(value, log start) when below the marker
--   floor:     DeleteRecords floor := max(floor, value); error when value > next
-- With a lease key and an epoch (offloaded, rewind): refused (FLOE_FENCED) unless the epoch is
-- the lease's current one.
local function marker(keys, args)
  local op, value = args[1], tonumber(args[2])
  if op ~= 'floor' then
    local refused = fenced(keys[2], args[3])
    if refused then return refused end
  end
  local m = load_meta(keys[1])
  local cur = num(redis.call('HGET', keys[1], 'offloaded'), 0)
  if op == 'offloaded' then
    if value > cur then redis.call('HSET', keys[1], 'offloaded', s(value)) end
    return s(math.max(cur, value))
  elseif op == 'rewind' then
    local to = math.max(value, m.start)
    if to < cur then redis.call('HSET', keys[1], 'offloaded', s(to)); return s(to) end
    return s(cur)
  elseif op == 'floor' then
    if value > m.next then return redis.error_reply('FLOE_RANGE offset ' .. s(value) .. ' is past the log end ' .. s(m.next)) end
    local f = math.max(m.floor, value)
    redis.call('HSET', keys[1], 'floor', s(f))
    return s(math.max(f, m.start))
  end
  return redis.error_reply('FLOE_ARG unknown marker op ' .. op)
end

-- KEYS: meta stream idx segs [lease]   ARGV: n upto [epoch]
-- Removes the n oldest sealed segments, all ending at or below `upto` (checked here, against
-- what the list holds now): trims the stream below the first offset kept (XTRIM MINID) and the
-- offset index, and moves the local start. Returns the new start. With a lease key and an
-- epoch: refused (FLOE_FENCED) unless the epoch is the lease's current one.
local function trim(keys, args)
  local meta, stream, idx, segs = keys[1], keys[2], keys[3], keys[4]
  local n, upto = tonumber(args[1]), tonumber(args[2])
  local refused = fenced(keys[5], args[3])
  if refused then return refused end
  local list = redis.call('LRANGE', segs, '0', s(n - 1))
  if #list < n then return redis.error_reply('FLOE_STALE segments changed') end
  local new_start = nil
  for _, e in ipairs(list) do
    local nxt = tonumber(string.match(e, '^%-?%d+,(%-?%d+),'))
    if nxt > upto then return redis.error_reply('FLOE_STALE segment past ' .. s(upto)) end
    new_start = nxt
  end
  if not new_start then return s(num(redis.call('HGET', meta, 'start'), 0)) end
  redis.call('LTRIM', segs, s(n), '-1')
  local id = entry_id(idx, new_start)
  redis.call('XTRIM', stream, 'MINID', id)
  -- Keep the index entry of the append holding new_start.
  local keep = redis.call('ZREVRANGEBYSCORE', idx, s(new_start), '-inf', 'WITHSCORES', 'LIMIT', '0', '1')
  if #keep == 2 then redis.call('ZREMRANGEBYSCORE', idx, '-inf', '(' .. keep[2]) end
  redis.call('HSET', meta, 'start', s(new_start))
  return s(new_start)
end

redis.register_function('floe_tier_append', append)
redis.register_function{ function_name = 'floe_tier_read', callback = read, flags = { 'no-writes' } }
redis.register_function('floe_tier_roll', roll)
redis.register_function('floe_tier_marker', marker)
redis.register_function('floe_tier_trim', trim)
