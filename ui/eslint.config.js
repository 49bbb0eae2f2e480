// ESLint for the UI: the TypeScript rules and every React hooks rule as an error, so a hook
// called conditionally, a missing effect dependency or a ref read while rendering fails the suite.
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

const hooks = reactHooks.configs.flat.recommended;
// The plugin ships some rules as warnings; a warning passes the suite, so all are errors here.
const hookRulesAsErrors = Object.fromEntries(Object.keys(hooks.rules).map((rule) => [rule, "error"]));

export default tseslint.config(
  { ignores: ["dist/", "node_modules/"] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ["**/*.{ts,tsx}"],
    plugins: hooks.plugins,
    rules: {
      ...hookRulesAsErrors,
      // A run of empty cases that share one body, with a comment on why some of them are there
      // (the event reducer), is a group, not a forgotten `break`.
      "no-fallthrough": ["error", { allowEmptyCase: true }],
      // As tsc's noUnusedParameters: a leading underscore marks a parameter kept for its position.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
);
