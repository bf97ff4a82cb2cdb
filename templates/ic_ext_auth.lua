-- ingress-controller: external authentication (annotation ingress-controller.io/auth-url).
--
-- Loaded with `lua-load-per-thread "${IC_LUA_DIR}/ic_ext_auth.lua"` when a backend uses it
-- (lib/render/ext_auth.ts, docs/annotations-rendering.md "External authentication"). The backend calls
--   http-request lua.ic_auth_request '<auth URL>' '<signin URL or ->' '<Header,Names or ->'
-- with arguments the controller validated (anchored URL and header-name patterns) and single-quoted.
-- As ingress-nginx's auth-url: every request is first sent to the auth URL (a GET carrying the
-- original headers, no body, plus X-Original-URL, X-Original-Method, …); a 2xx answer lets the
-- request through with the named headers of that answer copied into it (a client's own copies are
-- removed first), 401 and 403 are returned to the client (401 becomes a 302 to the signin URL with
-- the original URL in `rd` when one is given), anything else (the auth service down, a time-out, a
-- redirect, a 5xx) is a 500. Success is recorded in txn.ic_auth: the line after this action denies
-- with 500 whatever did not set it, so an error in this file fails closed, never open. The auth
-- answer's Set-Cookie headers are added to the response by `http-response lua.ic_auth_cookies` when
-- its status is one nginx's `add_header` applies to (ingress-nginx's default; session refreshes).

-- A timed-out or failed attempt is retried by HAProxy 2.6's httpclient (3 retries, not configurable
-- in 2.6): 4 attempts of 1.25 s bound a hanging auth service to about 5 s.
local ATTEMPT_TIMEOUT_MS = 1250

-- Never forwarded to the auth service: hop-by-hop headers, the body's framing (no body is sent) and
-- Host (the auth URL's own). IC: templates/ic_common.lua, loaded first.
local DROPPED = IC.dropped({ "expect", "host" })
local values = IC.values

-- Percent-encodes every byte outside `keep` (a Lua pattern class body), as nginx's $escaped_request_uri.
local function escape(s, keep)
  return (s:gsub("[^" .. keep .. "]", function(c) return string.format("%%%02X", c:byte()) end))
end

-- The statuses nginx's add_header (without `always`) adds headers to.
local COOKIE_STATUSES = { [200] = true, [201] = true, [204] = true, [206] = true, [301] = true, [302] = true,
  [303] = true, [304] = true, [307] = true, [308] = true }

local function split(list)
  local out = {}
  if list == "-" then return out end
  for name in list:gmatch("[^,]+") do out[#out + 1] = name end
  return out
end

local function plain(txn, status, extra)
  local headers = { ["content-type"] = { "text/plain" }, ["cache-control"] = { "no-store" } }
  for k, v in pairs(extra or {}) do headers[k] = v end
  txn:done({ status = status, headers = headers, body = tostring(status) .. "\n" })
end

local function authenticate(txn, url, signin, names)
  local http = txn.http
  local tls = txn.f:ssl_fc() -- a boolean sample reaches Lua as 0 or 1, and 0 is true in Lua
  local scheme = (tls == 1 or tls == true) and "https" or "http"
  local host = txn.sf:req_hdr("host") or ""
  local uri = txn.sf:pathq() or "/"
  local src = txn.sf:src() or ""

  local headers = {}
  for name, vals in pairs(http:req_get_headers()) do
    if not DROPPED[name] then headers[name] = values(vals) end
  end
  local forwarded = values(headers["x-forwarded-for"])
  forwarded[#forwarded + 1] = src
  headers["x-forwarded-for"] = { table.concat(forwarded, ", ") }
  headers["x-original-url"] = { scheme .. "://" .. host .. uri }
  headers["x-original-method"] = { txn.sf:method() }
  headers["x-forwarded-host"] = { host }
  headers["x-forwarded-proto"] = { scheme }
  headers["x-real-ip"] = { src }
  headers["x-auth-request-redirect"] = { uri }
  headers["x-sent-from"] = { "ingress-controller" }

  local res = core.httpclient():get({ url = url, headers = headers, timeout = ATTEMPT_TIMEOUT_MS })
  local status = res and tonumber(res.status) or 0
  local got = (res and res.headers) or {}

  if status >= 200 and status < 300 then
    for _, name in ipairs(split(names)) do
      http:req_del_header(name)
      for _, value in ipairs(values(got[name:lower()])) do http:req_add_header(name, value) end
    end
    local cookies = values(got["set-cookie"])
    if #cookies > 0 then txn:set_priv(cookies) end
    txn:set_var("txn.ic_auth", "ok")
    return
  end
  if status == 401 and signin ~= "-" then
    local target = signin
    if not (signin:find("?rd=", 1, true) or signin:find("&rd=", 1, true)) then
      local original = scheme .. "://" .. escape(host, "A-Za-z0-9.:%[%]-") .. escape(uri, "A-Za-z0-9._~/-")
      target = signin .. (signin:find("?", 1, true) and "&" or "?") .. "rd=" .. original
    end
    plain(txn, 302, { ["location"] = { target } })
  elseif status == 401 then
    local challenge = values(got["www-authenticate"])
    plain(txn, 401, #challenge > 0 and { ["www-authenticate"] = challenge } or nil)
  elseif status == 403 then
    plain(txn, 403)
  else
    plain(txn, 500)
  end
end

local function cookies(txn)
  local list = txn:get_priv()
  if type(list) ~= "table" or not COOKIE_STATUSES[tonumber(txn.f:status())] then return end
  for _, cookie in ipairs(list) do txn.http:res_add_header("set-cookie", cookie) end
end

core.register_action("ic_auth_request", { "http-req" }, authenticate, 3)
core.register_action("ic_auth_cookies", { "http-res" }, cookies, 0)
