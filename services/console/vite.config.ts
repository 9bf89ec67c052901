/**
 * The console's build (`vite build services/console`): a single-page app under a strict CSP, so
 * no inline script or style and no `data:` URIs (every asset is a hashed file under /assets/).
 */
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    target: 'es2022',
    sourcemap: false,
  },
  server: { proxy: { '/api': 'http://localhost:8080' } },
});
