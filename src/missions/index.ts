export * from './consume.js';
