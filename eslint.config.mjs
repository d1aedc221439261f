// Lint with the conventions of the Effect packages' own eslint.config.mjs (v3 branch):
// @effect/eslint-plugin's dprint formatting and its rules, on typescript-eslint.
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/dist", "**/node_modules", "tools/**", "**/*.mjs", "**/*.cjs"] },
  tseslint.configs.base,
  {
    files: ["**/*.ts"],
    plugins: { "@effect": effect },
    rules: {
      "no-fallthrough": "off",
      "no-irregular-whitespace": "off",
      "object-shorthand": "error",
      "prefer-destructuring": "off",
      "sort-imports": ["error", { ignoreCase: false, ignoreDeclarationSort: true, ignoreMemberSort: false }],
      "@effect/no-import-from-barrel-package": ["error", { packageNames: ["effect", "@effect/platform", "@effect/platform-node", "@effect/cli"] }],
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  }
)
