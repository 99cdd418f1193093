-- lighttpd 1.4 (mod_magnet) sending the siblings precompress wrote: x.br, x.zst
-- or x.gz beside x, to a client whose Accept-Encoding accepts it, chosen as
-- `precompress serve` chooses (RFC 9110 weights first, `*` counts, q=0 refuses,
-- then the smallest file). Tested by tests/serve_servers.rs with e2e/lighttpd.conf:
--
--   server.modules += ("mod_magnet")
--   magnet.attract-physical-path-to = ("/etc/lighttpd/precompress-siblings.lua")
--
-- It reads no manifest: no deltas, no manifest headers. A file whose type is not
-- in TYPES below is left to lighttpd, siblings or not (it would type a sibling by
-- its own suffix).

local TYPES = {
  js = "text/javascript; charset=utf-8", mjs = "text/javascript; charset=utf-8",
  cjs = "text/javascript; charset=utf-8", css = "text/css; charset=utf-8",
  html = "text/html; charset=utf-8", htm = "text/html; charset=utf-8",
  svg = "image/svg+xml", json = "application/json", map = "application/json",
  webmanifest = "application/manifest+json", xml = "application/xml",
  txt = "text/plain; charset=utf-8", wasm = "application/wasm",
}
-- Coding, suffix; the order breaks a tie of weight and size.
local CODINGS = { { "br", ".br" }, { "zstd", ".zst" }, { "gzip", ".gz" } }

-- A weight in thousandths from a q-value, or nil when it is not one.
local function qvalue(s)
  local i, f = s:match("^([01])%.?(%d*)$")
  if not i or #f > 3 or (s:find("%.") == nil and #f > 0) then return nil end
  local w = tonumber(i) * 1000 + tonumber((f .. "000"):sub(1, 3))
  if w > 1000 then return nil end
  return w
end

-- The client's weights by lower-cased coding: the first well-formed listing of each.
local function weights(header)
  local w = {}
  for part in (header .. ","):gmatch("([^,]*),") do
    local token, rest = part:match("^[ \t]*([%w!#$%%&'*+.^_`|~-]+)[ \t]*(.*)$")
    if token then
      local weight = 1000
      if rest ~= "" then
        local q = rest:match("^;[ \t]*[qQ][ \t]*=[ \t]*([%d.]+)[ \t]*$")
        weight = q and qvalue(q)
      end
      token = token:lower()
      if token == "x-gzip" then token = "gzip" end
      if weight and w[token] == nil then w[token] = weight end
    end
  end
  return w
end

local path = lighty.r.req_attr["physical.path"]
local header = lighty.r.req_header["Accept-Encoding"]
local st = path and lighty.c.stat(path)
local ext = path and path:match("%.([%w]+)$")
if not (st and st.is_file and ext and TYPES[ext:lower()]) then return 0 end

-- The type of the original on every answer (lighttpd would type a sibling by its suffix).
lighty.r.resp_header["Content-Type"] = TYPES[ext:lower()]
local found = {}
for _, c in ipairs(CODINGS) do
  local s = lighty.c.stat(path .. c[2])
  if s and s.is_file then found[#found + 1] = { c[1], c[2], s.st_size } end
end
if #found == 0 then return 0 end
lighty.r.resp_header["Vary"] = "Accept-Encoding"
if not header then return 0 end

local w = weights(header)
local star = w["*"]
-- Identity: its own weight, else `*`'s, else acceptable below every named coding.
local id = w["identity"] or star
local best, best_w, best_size = nil, id or -1, st.st_size
if id == 0 then best_w = nil end
for _, f in ipairs(found) do
  local fw = w[f[1]] or star or 0
  if fw > 0 and (best_w == nil or fw > best_w or (fw == best_w and f[3] < best_size)) then
    best, best_w, best_size = f, fw, f[3]
  end
end
if best == nil then
  if best_w == nil then
    -- Nothing acceptable. With a body of its own, the headers set above stay.
    lighty.r.resp_header["Content-Type"] = "text/plain; charset=utf-8"
    lighty.r.resp_body:set({ "406 Not Acceptable\n" })
    return 406
  end
  return 0
end
lighty.r.req_attr["physical.path"] = path .. best[2]
lighty.r.resp_header["Content-Encoding"] = best[1]
return 0
