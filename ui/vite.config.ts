/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { hljsLanguages } from "./build/hljsLanguages";

// Relative base: the same build is served by Tauri's custom protocol and by `skald serve`.
export default defineConfig({
  base: "./",
  plugins: [react(), hljsLanguages()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Everything is bundled locally; the CSP forbids remote content.
    assetsInlineLimit: 0,
  },
  server: { port: 5173, strictPort: true },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
  },
});
