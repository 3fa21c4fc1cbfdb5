/**
 * What the status bar item shows for each state of the server. Pure data, so the wording
 * is unit-tested and the same everywhere.
 */

export type ServerState = "inactive" | "starting" | "running" | "stopped" | "disabled" | "error";

export interface StatusPresentation {
  /** Status bar text, with a codicon. */
  text: string;
  tooltip: string;
  /** Shown with the error background colour. */
  isError: boolean;
}

const ICONS: Record<ServerState, string> = {
  inactive: "$(circle-outline)",
  starting: "$(loading~spin)",
  running: "$(check)",
  stopped: "$(debug-stop)",
  disabled: "$(circle-slash)",
  error: "$(error)",
};

const DESCRIPTIONS: Record<ServerState, string> = {
  inactive: "waiting for a Python file",
  starting: "starting the language server",
  running: "language server running",
  stopped: "language server stopped",
  disabled: "disabled by the rewardkit.enable setting",
  error: "language server not running",
};

/** Text and tooltip for `state`; `detail` (interpreter, error) goes in the tooltip. */
export function presentStatus(state: ServerState, detail?: string): StatusPresentation {
  const lines = [`rewardkit: ${DESCRIPTIONS[state]}`];
  if (detail) {
    lines.push(detail);
  }
  lines.push("Click to show the rewardkit output.");
  return { text: `${ICONS[state]} rewardkit`, tooltip: lines.join("\n"), isError: state === "error" };
}
