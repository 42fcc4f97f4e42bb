// The lint of the UI (`npm run lint`, run by scripts/test.sh): ESLint's and typescript-eslint's
// recommended rules, the type-aware ones too, and the rules of hooks (Preact's hooks follow
// React's rules, by the same names). A rule is turned off here only with the reason beside it.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default defineConfig(
  // Generated from the Rust commands (tauri-specta); its freshness is what the test checks.
  { ignores: ["dist/", "src/bindings.ts"] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    plugins: { "react-hooks": reactHooks },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      // Off: the effects re-run on the keys they name and read the latest callbacks on purpose (a
      // parent's onCount/onItems, the setters of this app's own hooks, which are not memoised);
      // listing those would re-run them on every render. Its 39 findings need one look each.
      "react-hooks/exhaustive-deps": "off",
    },
  },
  {
    rules: {
      // A Preact event handler may be async: Preact ignores what it answers, and each handler
      // here catches its own errors (a floating promise elsewhere is still an error).
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { attributes: false } }],
      // A function is async to say it answers a Promise (the tests' stand-ins for commands, a
      // pager's fetcher), not only to await.
      "@typescript-eslint/require-await": "off",
      // `const { [key]: _gone, ...rest } = o` is how a key is dropped from a copy.
      "@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true }],
    },
  },
  // The config files are plain modules outside the TypeScript project.
  { files: ["*.js", "*.ts"], extends: [tseslint.configs.disableTypeChecked] },
);
