// One linter for the whole tree; formatting is Prettier's job, so its conflicting rules are off.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "results/", "bench-results/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: "readonly", console: "readonly", URL: "readonly", setTimeout: "readonly", clearTimeout: "readonly" },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  {
    // The dashboard's and the report's scripts run in the browser, with uPlot and src/report/charts.js loaded before them.
    files: ["src/dashboard/page/**/*.js", "src/report/*.js"],
    languageOptions: {
      sourceType: "script",
      globals: {
        window: "readonly",
        document: "readonly",
        EventSource: "readonly",
        requestAnimationFrame: "readonly",
        devicePixelRatio: "readonly",
        addEventListener: "readonly",
        uPlot: "readonly",
        herdCharts: "readonly",
      },
    },
  },
  prettier,
  {
    // Prettier wraps code at 140 columns but never splits a string; this catches the rest.
    rules: {
      "max-len": [
        "error",
        {
          code: 140,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
          ignoreUrls: true,
          ignoreComments: false,
        },
      ],
    },
  },
);
