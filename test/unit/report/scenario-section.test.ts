import { describe, expect, it } from "vitest";
import { scenarioSection } from "../../../src/report/html.ts";
import { parseSummary, scenarioSettings, summaryJson } from "../../../src/report/summary-file.ts";

const SCENARIO = { file: "examples/<odd> & name.yaml", text: 'scenario: 1\nname: "a <b> & c"\nsystem:\n  clients: 20\n' };

describe("the scenario a run read, in its results", () => {
  it("is shown in the report as written, escaped, with its path; nothing without a file", () => {
    const html = scenarioSection(SCENARIO);
    expect(html).toContain("<h2>Scenario</h2>");
    expect(html).toContain("<code>examples/&lt;odd&gt; &amp; name.yaml</code>");
    expect(html).toContain('<pre class="scenario">scenario: 1\nname: &quot;a &lt;b&gt; &amp; c&quot;\nsystem:\n  clients: 20\n</pre>');
    expect(scenarioSection(undefined)).toBe("");
  });

  it("is embedded in summary.json's settings, path and text, and reads back", () => {
    const provenance = { commit: "abc", version: "0.1.0", machine: "test", node: "v20", date: "2026-01-01T00:00:00.000Z" };
    const text = summaryJson({ seed: 3, ...scenarioSettings(SCENARIO) }, provenance, []);
    expect(parseSummary(text).settings).toEqual({ seed: 3, scenario: SCENARIO });
    expect(scenarioSettings(undefined)).toEqual({});
  });
});
