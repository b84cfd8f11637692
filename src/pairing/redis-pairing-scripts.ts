/**
 * Lua scripts of the Redis pairing desk: each runs atomically on the Redis server, so two POSes (on
 * any instances) can never both take one app, and an app's timeout or hang-up never races a POS's
 * claim into a half-paired state.
 *
 * The app key `<prefix>:app:<user_uuid>` holds JSON `{s, id, i, u, a, t, p?}`: state (`waiting`,
 * `paired`, `departed`), the app session id, its instance id, user id, user address, when it arrived
 * (epoch ms) and, once paired, the POS's `{i, id}`. The POS key `<prefix>:pos:<user_uuid>` holds the JSON `{i, id}` of a POS waiting
 * for that app.
 */

/**
 * Lua: whether the instance that registered an app (`v.i`) still beats, by its alive key
 * `<prefix>:alive:<instance>` (redis-pairing-link.ts), the prefix read off the app key.
 */
const appInstanceAlive = `
local function alive(v)
  return redis.call('EXISTS', string.match(KEYS[1], '^(.-):app:') .. ':alive:' .. v.i) == 1
end
`;

/**
 * The app arrives, or re-asserts its wait once Redis answers again (it may have lost the key). KEYS:
 * app, pos. ARGV: value, ttl ms. Refuses (`busy`) while another app with the same user_uuid is
 * waiting or paired on a live instance; a departed one, or one whose instance died, is replaced. The
 * same app session again (a retry, a re-assertion) is `kept` once a POS paired it or it left, else
 * its key is renewed. Returns a waiting POS, if any.
 */
export const registerApp = `${appInstanceAlive}
local cur = redis.call('GET', KEYS[1])
if cur then
  local v = cjson.decode(cur)
  if v.id == cjson.decode(ARGV[1]).id then
    if v.s ~= 'waiting' then return {'kept'} end
  elseif v.s ~= 'departed' and alive(v) then return {'busy'} end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local pos = redis.call('GET', KEYS[2])
if pos then return {'ok', pos} end
return {'ok'}
`;

/**
 * Claims a waiting app (state paired, the POS recorded). KEYS: app. ARGV: pos ref, ttl ms. An app
 * whose instance died is no app: its key is removed. An app this POS session claimed already (a
 * retry whose first reply was lost) is `paired` again.
 */
const claimBody = `${appInstanceAlive}
local cur = redis.call('GET', KEYS[1])
if cur and not alive(cjson.decode(cur)) then
  redis.call('DEL', KEYS[1])
  cur = false
end
if cur then
  local v = cjson.decode(cur)
  if v.s == 'paired' and v.p and v.p.id == cjson.decode(ARGV[1]).id then return {'paired', cur} end
  if v.s == 'departed' then return {'departed'} end
  if v.s ~= 'waiting' then return {'busy'} end
  v.s = 'paired'
  v.p = cjson.decode(ARGV[1])
  redis.call('SET', KEYS[1], cjson.encode(v), 'PX', ARGV[2])
  return {'paired', cur}
end
`;

export const claimApp = `${claimBody}
return {'none'}
`;

/**
 * The POS arrives (or re-asserts its wait once Redis answers again): claims the app or, when it is
 * not there yet, registers as waiting for it (one POS per user_uuid; this POS again renews its own).
 * KEYS: app, pos. ARGV: pos ref, paired ttl ms, window ms left.
 */
export const takeApp = `${claimBody}
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return {'waiting'}
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[3]) then return {'waiting'} end
return {'pos_busy'}
`;

/** The app's wait for a POS ended: 1 when it was still waiting (now removed) or is gone, 0 when paired. KEYS: app. ARGV: app id. */
export const expireApp = `
local cur = redis.call('GET', KEYS[1])
if not cur then return 1 end
local v = cjson.decode(cur)
if v.id ~= ARGV[1] then return 1 end
if v.s == 'paired' then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/**
 * The app hung up. KEYS: app. ARGV: app id, departed ttl ms. A waiting app is remembered as departed
 * (a POS coming for it is told 01); a paired one is removed and its POS returned.
 */
export const leaveApp = `
local cur = redis.call('GET', KEYS[1])
if not cur then return false end
local v = cjson.decode(cur)
if v.id ~= ARGV[1] or v.s == 'departed' then return false end
if v.s == 'waiting' then
  v.s = 'departed'
  redis.call('SET', KEYS[1], cjson.encode(v), 'PX', ARGV[2])
  return false
end
redis.call('DEL', KEYS[1])
if v.s == 'paired' then return cjson.encode(v.p) end
return false
`;

/**
 * Removes a waiting (unpaired) app and returns it. KEYS: app. ARGV (optional): the id of a POS session
 * that gave up ('' for none): an app it paired (a claim whose reply Redis lost) is removed and
 * returned too; a time (epoch ms): an app that arrived after it is left alone.
 */
export const failWaitingApp = `
local cur = redis.call('GET', KEYS[1])
if not cur then return false end
local v = cjson.decode(cur)
if ARGV[2] and v.t and v.t > tonumber(ARGV[2]) then return false end
if v.s == 'waiting' or (ARGV[1] and ARGV[1] ~= '' and v.s == 'paired' and v.p and v.p.id == ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return cur
end
return false
`;

/** Removes the app key if it is still this app session's. KEYS: app. ARGV: app id. */
export const releaseApp = `
local cur = redis.call('GET', KEYS[1])
if cur and cjson.decode(cur).id == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;

/** Deletes a key if it still holds the value. KEYS: key. ARGV: value. */
export const deleteIfEqual = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;
