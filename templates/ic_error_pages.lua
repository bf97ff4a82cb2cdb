-- ingress-controller: custom error pages (annotations ingress-controller.io/error-codes + default-backend).
--
-- Loaded with `lua-load-per-thread "${IC_LUA_DIR}/ic_error_pages.lua"` when a backend uses it
-- (lib/render/features/error_pages.ts, docs/annotations-rendering.md "Custom error pages"). The route's backend calls
--   http-response lua.ic_error_page '<fallback backend>' '<codes>' '<namespace>' '<ingress>' '<service>' '<port>'
-- with arguments the controller validated (anchored patterns) and single-quoted; its request rules stored the
-- request's URI, Accept and X-Request-ID in txn.ic_ep_* before any rewrite.
-- As ingress-nginx's custom-http-errors: when the backend answers with one of the codes, the client gets the
-- default backend's answer (status, headers and body: nginx does not change it) to a GET of `/` carrying X-Code,
-- X-Format, X-Original-URI, X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port and X-Request-ID.
-- HAProxy cannot send the request to another backend once a response has come, so the page is fetched with
-- HAProxy's httpclient through the proxy's own frontend `ic_error_pages`, bound on a unix socket beside the
-- Runtime API socket (mode 600: only the proxy's user reaches it), which routes on a header only this file sets
-- to the default backend's server slots. That frontend marks the answers of a server (X-IC-Error-Page): an
-- answer of HAProxy itself (no server, refused, time-out) or a page larger than MAX_BODY keeps the original
-- response, as does any error here.

local MAX_BODY = 65536
-- The httpclient of HAProxy 2.6 retries a failed attempt 3 times: 4 attempts of 1 s bound a silent default backend.
local ATTEMPT_TIMEOUT_MS = 1000

local socket = os.getenv("IC_RUNTIME_SOCKET")
local DST = socket and ("unix@" .. socket .. ".errors") or nil

-- Never copied from the page's answer: framing (HAProxy writes its own), hop-by-hop headers and the internal mark.
-- IC: templates/ic_common.lua, loaded first.
local DROPPED = IC.dropped({ "x-ic-error-page" })
local values = IC.values

local function listed(codes, status)
  for code in codes:gmatch("[0-9]+") do
    if tonumber(code) == status then return true end
  end
  return false
end

local function page(txn, fallback, codes, namespace, ingress, service, port)
  local status = tonumber(txn.f:status())
  if DST == nil or status == nil or not listed(codes, status) then return end
  local host = txn:get_var("txn.host") or ""
  -- the Host the default backend sees: the request's, when it is a plain host name
  if not host:match("^[a-z0-9][a-z0-9.-]*$") then host = "localhost" end
  local headers = {
    ["x-ic-error-backend"] = { fallback },
    ["x-code"] = { tostring(status) },
    ["x-format"] = { txn:get_var("txn.ic_ep_accept") or "" },
    ["x-original-uri"] = { txn:get_var("txn.ic_ep_uri") or "/" },
    ["x-namespace"] = { namespace },
    ["x-ingress-name"] = { ingress },
    ["x-service-name"] = { service },
    ["x-service-port"] = { port },
    ["x-forwarded-for"] = { txn.f:src() or "" },
    ["accept"] = { txn:get_var("txn.ic_ep_accept") or "*/*" },
  }
  local id = txn:get_var("txn.ic_ep_id")
  if id ~= nil then headers["x-request-id"] = { id } end

  local res = core.httpclient():get({
    url = "http://" .. host .. "/",
    dst = DST,
    headers = headers,
    timeout = ATTEMPT_TIMEOUT_MS,
  })
  if not res or not res.headers or not res.headers["x-ic-error-page"] then return end
  local body = res.body or ""
  local code = tonumber(res.status)
  if #body > MAX_BODY or code == nil then return end

  local reply = {}
  for name, vals in pairs(res.headers) do
    if not DROPPED[name] then reply[name] = values(vals) end
  end
  if txn.f:method() == "HEAD" then body = "" end
  txn:done({ status = code, headers = reply, body = body })
end

core.register_action("ic_error_page", { "http-res" }, page, 6)
