-- ingress-controller: helpers shared by our Lua actions (templates/ic_ext_auth.lua, templates/ic_error_pages.lua).
--
-- Loaded with `lua-load-per-thread "${IC_LUA_DIR}/ic_common.lua"` before them (lib/render/lua.ts): the files of a
-- thread share one Lua state, so this table is visible to the files loaded after it.

IC = {}

-- Hop-by-hop headers and the body's framing: never copied from one message to another.
IC.HOP_BY_HOP = {
  ["connection"] = true,
  ["keep-alive"] = true,
  ["proxy-connection"] = true,
  ["te"] = true,
  ["trailer"] = true,
  ["transfer-encoding"] = true,
  ["upgrade"] = true,
  ["content-length"] = true,
}

-- A set of HOP_BY_HOP plus `extra` names.
function IC.dropped(extra)
  local out = {}
  for name in pairs(IC.HOP_BY_HOP) do out[name] = true end
  for _, name in ipairs(extra) do out[name] = true end
  return out
end

-- HAProxy's header tables are indexed from 0; the httpclient's and the replies' from 1.
function IC.values(t)
  local out = {}
  if t == nil then return out end
  local i = 0
  while t[i] ~= nil do
    out[#out + 1] = t[i]
    i = i + 1
  end
  return out
end
