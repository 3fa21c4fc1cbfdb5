/** When the server is worth starting: a Python file is open, or a pyproject declares `[tool.rewardkit]`. */

/** Whether a pyproject.toml's text has a `[tool.rewardkit]` table (or a sub-table of it). */
export function declaresRewardkit(pyprojectText: string): boolean {
  return /^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*(rewardkit|"rewardkit")[ \t]*(\]|\.)/m.test(pyprojectText);
}

/** Whether a document of `languageId` and `scheme` is one the server checks. */
export function isCheckedDocument(languageId: string, scheme: string): boolean {
  return languageId === "python" && (scheme === "file" || scheme === "untitled");
}
