-- ingress-controller: external authentication (annotation ingress-controller.io/auth-url).
--
-- Loaded with `lua-load-per-thread "${IC_LUA_DIR}/ic_ext_auth.lua"` when a backend uses it
-- (lib/render/features/ext_auth.ts, docs/ext-auth-addresses.md). The backend first puts the auth
-- service's address in txn.ic_auth_dst (a literal, or a name resolved by do-resolve) and drops it when it is in
-- a refused range (loopback, link-local, metadata, ...), then calls
--   http-request lua.ic_auth_request '<auth URL>' '<port>' '<signin URL or ->' '<response Header,Names or ->'
--                                    '<request Header,Names or ->'
-- with arguments the controller validated (anchored URL and header-name patterns) and single-quoted.
-- As ingress-nginx's auth-url: every request is first sent to the auth URL (a GET without body, with
-- X-Original-URL, X-Original-Method, ...), but only the client's Cookie and Authorization headers and
-- those the last argument names are forwarded. The request goes to exactly the address found before
-- (the httpclient's `dst`): the name is never resolved again, so a second DNS answer cannot differ
-- from the one checked. A 2xx answer lets the request through with the named headers of that answer
-- copied into it (a client's own copies are removed first), 401 and 403 are returned to the client
-- (401 becomes a 302 to the signin URL with the original URL in `rd` when one is given), anything
-- else (no usable address, the auth service down, a time-out, a redirect, a 5xx) is a 500. Success is
-- recorded in txn.ic_auth: the line after this action denies with 500 whatever did not set it, so an
-- error in this file fails closed, never open. The auth answer's Set-Cookie headers are added to the
-- response by `http-response lua.ic_auth_cookies` when its status is one nginx's `add_header` applies
-- to (ingress-nginx's default; session refreshes).

-- A timed-out or failed attempt is retried by HAProxy 2.6's httpclient (3 retries, not configurable
-- in 2.6): 4 attempts of 1.25 s bound a hanging auth service to about 5 s.
local ATTEMPT_TIMEOUT_MS = 1250

-- The client's headers every auth request carries; auth-request-headers adds more (never those the
-- request gets from this file or the httpclient: the controller refuses them). IC: templates/ic_common.lua.
local FORWARDED = { "cookie", "authorization" }
local values = IC.values

-- X-Sent-From of our auth requests: one that reaches an auth route of this proxy again (an auth URL
-- leading back to the proxy) is answered 500 at once instead of asking again, which would loop.
local SENT_FROM = "ingress-controller"

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

local function authenticate(txn, url, port, signin, names, forward)
  local http = txn.http
  local incoming = http:req_get_headers()
  for _, v in ipairs(values(incoming["x-sent-from"])) do
    if v == SENT_FROM then return plain(txn, 500) end
  end
  local dst = txn:get_var("txn.ic_auth_dst")
  if type(dst) ~= "string" or not dst:match("^[0-9A-Fa-f:.]+$") or not port:match("^[0-9]+$")
    or dst == txn.f:dst() then
    -- not resolved, a refused address (dropped before this action), or the proxy's own address
    local refused = txn:get_var("txn.ic_auth_refused") or (type(dst) == "string" and dst) or nil
    txn:Warning("external authentication: " .. url .. (refused and (" leads to " .. tostring(refused) ..
      ", an address the proxy never contacts") or " did not resolve") .. "; answered 500")
    return plain(txn, 500)
  end
  local tls = txn.f:ssl_fc() -- a boolean sample reaches Lua as 0 or 1, and 0 is true in Lua
  local scheme = (tls == 1 or tls == true) and "https" or "http"
  local host = txn.sf:req_hdr("host") or ""
  local uri = txn.sf:pathq() or "/"
  local src = txn.sf:src() or ""

  local headers = {}
  local wanted = {}
  for _, name in ipairs(FORWARDED) do wanted[name] = true end
  for _, name in ipairs(split(forward)) do wanted[name:lower()] = true end
  for name in pairs(wanted) do
    local vals = values(incoming[name])
    if #vals > 0 then headers[name] = vals end
  end
  local forwarded = values(incoming["x-forwarded-for"])
  forwarded[#forwarded + 1] = src
  headers["x-forwarded-for"] = { table.concat(forwarded, ", ") }
  headers["x-original-url"] = { scheme .. "://" .. host .. uri }
  headers["x-original-method"] = { txn.sf:method() }
  headers["x-forwarded-host"] = { host }
  headers["x-forwarded-proto"] = { scheme }
  headers["x-real-ip"] = { src }
  headers["x-auth-request-redirect"] = { uri }
  headers["x-sent-from"] = { SENT_FROM }

  local address = dst:find(":", 1, true) and ("[" .. dst .. "]:" .. port) or (dst .. ":" .. port)
  local res = core.httpclient():get({ url = url, headers = headers, timeout = ATTEMPT_TIMEOUT_MS, dst = address })
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

core.register_action("ic_auth_request", { "http-req" }, authenticate, 5)
core.register_action("ic_auth_cookies", { "http-res" }, cookies, 0)
