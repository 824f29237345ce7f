// The linter: eslint's and typescript-eslint's recommended rules over the sources, tests,
// benchmarks and scripts, with the few choices below.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'repos/', '.tap/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    rules: {
      // Input checks match control characters on purpose (NUL, C0, DEL in names and URLs).
      'no-control-regex': 'off',
      // `_name` marks a parameter a signature needs and the body does not.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // A variable assigned once after a closure that reads it (a teardown) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // ctx.state's fields are added to Koa's DefaultState by `interface DefaultState extends …State {}`.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    },
  },
  // src has no `any`: database rows, thrown values, remote JSON and library internals are typed
  // (migrations and bin have none either, under the recommended rule). Tests and benchmarks
  // keep some for fixtures and probes of internals; scripts may too.
  { files: ['src/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'error' } },
  { files: ['test/**', 'bench/**', 'scripts/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  // The web UI's one small script runs in the browser.
  { files: ['src/ui/static/**/*.js'], languageOptions: { globals: { ...globals.browser } } },
);
