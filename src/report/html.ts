/** Text made safe inside an HTML element or a double-quoted attribute. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"]/g, (character) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[character]!);

/** A scenario file as a program read it (src/scenario-file): what the report and summary.json embed. */
export interface ScenarioSource {
  /** The path as given on the command line. */
  readonly file: string;
  /** The file's text, exactly. */
  readonly text: string;
}

/** The scenario file a run read, embedded in its report as written; nothing when the run had none. */
export function scenarioSection(scenario: ScenarioSource | undefined): string {
  if (scenario === undefined) return "";
  return (
    `<h2>Scenario</h2>\n<p>Read from <code>${escapeHtml(scenario.file)}</code>; flags given beside it override its values.</p>\n` +
    `<pre class="scenario">${escapeHtml(scenario.text)}</pre>\n`
  );
}

/** The reports' one look: page, code blocks and tables (choose's and check's reports). */
export const PAGE_STYLE = `body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
pre{background:#f6f6f6;padding:1em;overflow-x:auto}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;white-space:nowrap}th{background:#f0f0f0}`;
