import { applyEdits, modify, parse } from "jsonc-parser";
import { type ConfigFormat, ConfigFileError, type PolicyReading } from "../../src/check/format.ts";

/*
 * A configuration format of our own flags (a JSON object of policies, each a map of flags), so
 * that check's grade and its search for the smallest change are tested apart from any one
 * system's format: the real formats have tests of their own (test/unit/check/formats/).
 */

const SOURCE = "this test's own format";

/** { "policies": { "<name>": { "<flag>": "<value>" } } }: every flag a field, written with jsonc-parser. */
export const flagsFormat: ConfigFormat = {
  name: "flags",
  title: "flags as JSON (test)",
  source: SOURCE,
  recognizes: (text) => text.includes('"policies"'),
  read: (text) => {
    const document = parse(text) as { policies?: Record<string, Record<string, string>> } | undefined;
    if (document?.policies === undefined || typeof document.policies !== "object") throw new ConfigFileError("policies: missing");
    return {
      policies: Object.entries(document.policies).map(([name, flags]): PolicyReading => ({
        name,
        settings: flags,
        fields: Object.entries(flags).map(([flag, value]) => ({
          field: `policies.${name}.${flag}`,
          value,
          settings: { [flag]: value },
          source: SOURCE,
        })),
        unmodeled: [],
      })),
    };
  },
  write: (text, policyIndex, target) => {
    const document = parse(text) as { policies: Record<string, Record<string, string>> };
    const [name, flags] = Object.entries(document.policies)[policyIndex]!;
    if (target.breaker !== undefined) return { kind: "inexpressible", why: "this format has no breaker" };
    let edited = text;
    const names = new Set([...Object.keys(flags), ...Object.keys(target)]);
    for (const flag of names) {
      if (flags[flag] === target[flag]) continue;
      edited = applyEdits(
        edited,
        modify(edited, ["policies", name, flag], target[flag], { formattingOptions: { insertSpaces: true, tabSize: 2 } }),
      );
    }
    return { kind: "written", text: edited, notes: [] };
  },
  knobs: ["max-attempts", "min-delay", "max-delay", "budget", "breaker"],
};
