-- Headless Neovim 0.7 as a real LSP client of rewardkit_lsp.
-- Starts the server, attaches it to the current buffer, waits for diagnostics, prints them as
-- "file:line:col: [source code] message" (col in bytes, as Neovim stores it), asks for hover on
-- the line/col given by REWARDKIT_HOVER ("line:col", 1-based line, 0-based byte col), then quits.
-- With REWARDKIT_RECONFIGURE ("path=content"), it then rewrites that file (a pyproject.toml),
-- saves the buffer (Neovim 0.7 declares no file watching: only didSave tells the server) and
-- prints the diagnostics again, prefixed "AFTER ", once an RK101 appears.
-- Exit status: 0 when diagnostics arrived, 1 on timeout, 2 when the client could not start.
local python = assert(os.getenv("REWARDKIT_PYTHON"), "REWARDKIT_PYTHON is not set")
local root = assert(os.getenv("REWARDKIT_ROOT"), "REWARDKIT_ROOT is not set")

local client_id = vim.lsp.start_client({
  name = "rewardkit",
  cmd = { python, "-m", "rewardkit_lsp" },
  root_dir = root,
  init_options = { rewardkit = { debounceMs = 0 } },
})
if client_id == nil then
  io.stderr:write("rewardkit: the LSP client did not start\n")
  vim.cmd("cquit 2")
end
vim.lsp.buf_attach_client(0, client_id)

local arrived = vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
if not arrived then
  io.stderr:write("rewardkit: no diagnostics within 20 s\n")
  vim.cmd("cquit 1")
end

local name = vim.fn.expand("%:t")
for _, d in ipairs(vim.diagnostic.get(0)) do
  io.stdout:write(string.format("%s:%d:%d: [%s %s] %s\n", name, d.lnum + 1, d.col, d.source, d.code, d.message))
end

local hover_at = os.getenv("REWARDKIT_HOVER")
if hover_at then
  local line, col = hover_at:match("(%d+):(%d+)")
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(),
    position = { line = tonumber(line) - 1, character = tonumber(col) },
  }
  local responses = vim.lsp.buf_request_sync(0, "textDocument/hover", params, 10000) or {}
  for _, response in pairs(responses) do
    if response.result and response.result.contents then
      local value = response.result.contents.value or vim.inspect(response.result.contents)
      io.stdout:write("HOVER " .. value:gsub("\n", " ") .. "\n")
    end
  end
end

local reconfigure = os.getenv("REWARDKIT_RECONFIGURE")
if reconfigure then
  local path, content = reconfigure:match("^(.-)=(.*)$")
  local file = assert(io.open(path, "w"))
  file:write((content:gsub("\\n", "\n")))
  file:close()
  vim.cmd("write")
  local function has_rk101()
    for _, d in ipairs(vim.diagnostic.get(0)) do
      if d.code == "RK101" then return true end
    end
    return false
  end
  if not vim.wait(20000, has_rk101, 50) then
    io.stderr:write("rewardkit: the changed configuration was not seen within 20 s\n")
    vim.cmd("cquit 1")
  end
  for _, d in ipairs(vim.diagnostic.get(0)) do
    io.stdout:write(string.format("AFTER %s:%d:%d: [%s %s] %s\n", name, d.lnum + 1, d.col, d.source, d.code, d.message))
  end
end

vim.lsp.stop_client(client_id)
vim.cmd("qall!")
