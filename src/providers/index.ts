// The public surface of src/providers (DESIGN.md §4).
export * from './sandbox/index.js';
