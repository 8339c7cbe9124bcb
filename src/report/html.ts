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
