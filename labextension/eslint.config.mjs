// ESLint for the sidebar's TypeScript: code rules only. Layout is Prettier's job
// (`npm run prettier:check`); eslint-config-prettier turns off every rule that would
// disagree with it. Both run offline from node_modules (`make lint-ts`).
import js from '@eslint/js';
import jupyter from '@jupyter/eslint-plugin';
import prettierCompatible from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig([
  {
    // build output, dependencies, and the types generated from the REST and event schemas
    ignores: [
      'lib/',
      'node_modules/',
      'coverage/',
      'src/rest-types.ts',
      'src/event-types.ts',
      '**/*.d.ts'
    ]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  jupyter.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      globals: { ...globals.browser, ...globals.es2022 },
      sourceType: 'module'
    },
    rules: {
      // Types are PascalCase without Lumino's `I` prefix for interfaces.
      '@typescript-eslint/naming-convention': [
        'error',
        { selector: 'typeLike', format: ['PascalCase'] }
      ],
      // The sidebar is not translated (it has no translation bundle): strings stay literal.
      'jupyter/no-untranslated-string': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-namespace': 'off',
      curly: ['error', 'all'],
      eqeqeq: 'error',
      'prefer-arrow-callback': 'error'
    }
  },
  {
    files: ['**/*.mjs', 'scripts/**/*.js'],
    languageOptions: { globals: globals.node }
  },
  prettierCompatible
]);
