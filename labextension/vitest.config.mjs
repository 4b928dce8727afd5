// Unit tests of the sidebar's view logic and DOM rendering, in happy-dom (no browser, no lab).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'happy-dom',
    include: ['test/**/*.test.ts'],
    reporters: ['default']
  }
});
